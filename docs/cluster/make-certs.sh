#!/bin/sh
# The internal CA and certificates of docs/cluster/compose.yaml: one for
# the Folio replicas (folio.internal, folio1-3) and one for the S3 server
# (s3). Caddy and the replicas trust certs/ca.pem; the public certificate
# is Caddy's own (Let's Encrypt).
set -eu
mkdir -p certs/s3
cd certs
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
	-subj "/CN=Folio internal CA" -keyout ca-key.pem -out ca.pem
leaf() { # name, SANs, cert out, key out
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" -keyout "$4" -out "$1.csr"
	printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$2" > "$1.ext"
	openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 825 -extfile "$1.ext" -out "$3"
	rm "$1.csr" "$1.ext"
}
leaf folio.internal DNS:folio.internal,DNS:folio1,DNS:folio2,DNS:folio3 folio.pem folio-key.pem
leaf s3 DNS:s3 s3/public.crt s3/private.key
# The replicas run as user 65532 (distroless nonroot) and read their key.
chmod 0644 folio-key.pem s3/private.key ca.pem folio.pem s3/public.crt
chmod 0600 ca-key.pem
