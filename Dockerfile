# Folio container image (docs/deploy.md, "Docker").
#
#   docker build --build-arg VERSION=1.0.0 --build-arg COMMIT=$(git rev-parse --short HEAD) -t folio:1.0.0 .
#   docker run -d --name folio -p 8443:8443 -v folio-data:/data folio:1.0.0
#
# The binary is static (CGO_ENABLED=0: SQLite is pure Go) and runs as the
# distroless nonroot user (65532) with its data in the /data volume.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=none
ARG DATE=unknown
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" \
    -o /out/folio . \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/folio /folio
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME /data
EXPOSE 8443
ENV FOLIO_ADDR=0.0.0.0:8443 \
    FOLIO_DATA=/data
ENTRYPOINT ["/folio"]
CMD ["serve"]
