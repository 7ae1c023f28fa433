#!/usr/bin/python3
"""Structural PDF/A-2/3 (b, u) checks, an independent reader for Folio's tests.

veraPDF, the reference validator, is Java and cannot be installed on these
machines; this script checks with pikepdf (qpdf) and fontTools the rules of
veraPDF's PDF/A-2/3 "b" profile that a writer like Folio's can break. Each
violation is printed as "<rule> <message>"; the exit status is 1 when there
is one. docs/decisions.md ("PDF/A without veraPDF") lists what is checked.

usage: check.py FILE PART CONFORMANCE     (e.g. check.py doc.pdf 2 B)
"""
import io
import re
import sys
import xml.etree.ElementTree as ET
from datetime import datetime, timezone, timedelta

import pikepdf
from fontTools.ttLib import TTFont

STANDARD_BLEND = {"/Normal", "/Compatible", "/Multiply", "/Screen", "/Overlay", "/Darken", "/Lighten",
                  "/ColorDodge", "/ColorBurn", "/HardLight", "/SoftLight", "/Difference", "/Exclusion",
                  "/Hue", "/Saturation", "/Color", "/Luminosity"}
FORBIDDEN_ACTIONS = {"/Launch", "/Sound", "/Movie", "/ResetForm", "/ImportData", "/Hide", "/SetOCGState",
                     "/Rendition", "/Trans", "/GoTo3DView", "/JavaScript"}
NS = {
    "x": "adobe:ns:meta/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "dc": "http://purl.org/dc/elements/1.1/",
    "xmp": "http://ns.adobe.com/xap/1.0/",
    "pdf": "http://ns.adobe.com/pdf/1.3/",
    "pdfaid": "http://www.aiim.org/pdfa/ns/id/",
}

problems = []


def fail(rule, msg):
    problems.append(f"{rule} {msg}")


def pdf_date(s):
    m = re.fullmatch(r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(Z|[+-]\d{2}'?\d{2}'?)?", s)
    if not m:
        return None
    parts = [int(p) if p else d for p, d in zip(m.groups()[:6], (0, 1, 1, 0, 0, 0))]
    tz = m.group(7)
    off = timedelta(0)
    if tz and tz != "Z":
        sign = -1 if tz[0] == "-" else 1
        digits = tz[1:].replace("'", "")
        off = sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
    elif tz is None:
        return ("notz", datetime(*parts))
    return datetime(*parts, tzinfo=timezone(off))


def xmp_date(s):
    s = s.strip().replace("Z", "+00:00")
    return datetime.fromisoformat(s)


def main(path, part, conformance):
    raw = open(path, "rb").read()
    # 6.1.2: header and the binary comment after it.
    lines = raw.split(b"\n", 2)
    if not re.fullmatch(rb"%PDF-1\.[0-7]\r?", lines[0]):
        fail("6.1.2-1", f"header {lines[0][:12]!r} is not %PDF-1.0 to -1.7")
    if len(lines) < 2 or not lines[1].startswith(b"%") or sum(1 for b in lines[1][1:5] if b > 127) < 4:
        fail("6.1.2-2", "no comment of four bytes over 127 after the header")
    # 6.1.3-3: nothing after the last %%EOF but an end of line.
    tail = raw[raw.rfind(b"%%EOF") + 5:]
    if tail not in (b"", b"\n", b"\r\n", b"\r"):
        fail("6.1.3-3", f"{len(tail)} bytes after %%EOF")
    # 6.1.7.1: stream keyword and endstream on their own lines (checked on the bytes).
    for m in re.finditer(rb"stream(\r\n|\n|\r)?", raw):
        if raw[m.start() - 3:m.start()] == b"end":
            continue
        if m.group(1) not in (b"\n", b"\r\n"):
            fail("6.1.7.1-1", f"stream keyword at {m.start()} not followed by an end of line")
            break

    try:
        pdf = pikepdf.open(path)
    except pikepdf.PasswordError:
        fail("6.1.3-2", "document is encrypted (opens only with a password)")
        return
    trailer = pdf.trailer
    # 6.1.3-1/-2: an ID, no encryption.
    if "/ID" not in trailer or len(trailer.ID) != 2:
        fail("6.1.3-1", "trailer has no ID with two entries")
    if "/Encrypt" in trailer or pdf.is_encrypted:
        fail("6.1.3-2", "document is encrypted")
    root = pdf.Root
    # 6.1.13 / 6.5: no JavaScript, no additional actions at document level.
    if "/AA" in root:
        fail("6.6.1-1", "catalog has additional actions")
    if "/Names" in root and "/JavaScript" in root.Names:
        fail("6.6.1-2", "document-level JavaScript")
    if "/Perms" in root:
        fail("6.1.12-1", "catalog has /Perms")
    if "/NeedsRendering" in root:
        fail("6.1.x", "NeedsRendering in catalog")
    if "/AcroForm" in root and root.AcroForm.get("/NeedAppearances", False):
        fail("6.4.1-3", "AcroForm NeedAppearances true")

    # 6.2.2/6.2.3: the output intent and its ICC profile.
    intents = root.get("/OutputIntents", [])
    pdfa_intents = [oi for oi in intents if oi.get("/S") == "/GTS_PDFA1"]
    rgb_intent = False
    if not pdfa_intents:
        fail("6.2.3-1", "no GTS_PDFA1 output intent")
    for oi in pdfa_intents:
        prof = oi.get("/DestOutputProfile")
        if prof is None:
            fail("6.2.3-2", "output intent without DestOutputProfile")
            continue
        data = prof.read_bytes()
        if len(data) < 128 or data[36:40] != b"acsp":
            fail("6.2.3-3", "DestOutputProfile is not an ICC profile")
            continue
        major = data[8]
        cls, space = data[12:16], data[16:20]
        if major > 4:
            fail("6.2.3-4", f"ICC profile version {major} is over 4")
        if cls not in (b"prtr", b"mntr"):
            fail("6.2.3-3", f"ICC profile class {cls!r} is neither prtr nor mntr")
        n = int(prof.get("/N", 0))
        want = {b"RGB ": 3, b"GRAY": 1, b"CMYK": 4}.get(space)
        if n != want:
            fail("6.2.3-5", f"/N {n} does not match the profile's colour space {space!r}")
        rgb_intent = rgb_intent or space == b"RGB "

    # Every object: streams, fonts, images, graphics states, annotations.
    has_cmyk_ops = False
    af_specs = []  # file specifications of embedded files (PDF/A-3)
    for obj in pdf.objects:
        if not isinstance(obj, (pikepdf.Dictionary, pikepdf.Stream)):
            continue
        d = obj.stream_dict if isinstance(obj, pikepdf.Stream) else obj
        if isinstance(obj, pikepdf.Stream):
            for k in ("/F", "/FFilter", "/FDecodeParms"):
                if k in d:
                    fail("6.1.7.1-2", f"stream has {k}")
            filters = d.get("/Filter")
            flist = [filters] if isinstance(filters, pikepdf.Name) else list(filters or [])
            for f in flist:
                if str(f) in ("/LZWDecode", "/Crypt"):
                    fail("6.1.7.2-1", f"stream filter {f}")
        typ = d.get("/Type")
        sub = d.get("/Subtype")
        if sub == "/Image":
            if d.get("/Interpolate", False):
                fail("6.2.8-3", "image with Interpolate true")
            if "/Alternates" in d or "/OPI" in d:
                fail("6.2.8-1", "image with Alternates or OPI")
            cs = d.get("/ColorSpace")
            if cs == "/DeviceCMYK":
                has_cmyk_ops = True
            if cs == "/DeviceRGB" and not rgb_intent:
                fail("6.2.4.3-2", "DeviceRGB image without an RGB output intent")
        if sub in ("/PS",) or (sub == "/Form" and "/Subtype2" in d) or "/Ref" in d and sub == "/Form":
            fail("6.2.9-1", "PostScript or reference XObject")
        if typ == "/ExtGState":
            if "/TR" in d or ("/TR2" in d and d.TR2 != "/Default") or "/HTP" in d:
                fail("6.2.5-1", "graphics state with TR, TR2 or HTP")
            bm = d.get("/BM")
            if bm is not None and str(bm) not in STANDARD_BLEND:
                fail("6.2.10-1", f"non-standard blend mode {bm}")
            sm = d.get("/SMask")
            if sm is not None and not (sm == "/None" or isinstance(sm, pikepdf.Dictionary)):
                fail("6.2.10-2", "SMask in graphics state is neither None nor a mask")
        if typ == "/Font" and sub not in ("/CIDFontType0", "/CIDFontType2"):
            check_font(d, conformance)  # descendants are checked through their Type0 font
        if typ == "/Annot" or sub in ("/Link", "/Widget", "/Text", "/FileAttachment"):
            if sub in ("/Sound", "/Movie", "/Screen", "/3D", "/RichMedia", "/TrapNet"):
                fail("6.3.1-1", f"annotation subtype {sub}")
            flags = int(d.get("/F", 0))
            if not flags & 4:
                fail("6.3.2-1", f"{sub} annotation without the print flag")
            if flags & (1 | 2 | 32):
                fail("6.3.2-2", f"{sub} annotation hidden or invisible")
            act = d.get("/A")
            if act is not None and str(act.get("/S")) in FORBIDDEN_ACTIONS:
                fail("6.5.1-1", f"forbidden action {act.get('/S')}")
        if "/S" in d and typ == "/Action" and str(d.S) in FORBIDDEN_ACTIONS:
            fail("6.5.1-1", f"forbidden action {d.S}")
        if typ == "/EmbeddedFile" or typ == "/Filespec":
            if part == 2 and typ == "/EmbeddedFile":
                fail("6.8-1", "embedded file in PDF/A-2 (checking embedded PDF/A files is not done here)")
            if part == 3 and typ == "/Filespec" and "/AFRelationship" not in d:
                fail("6.8-3", "file specification without AFRelationship")
            if part == 3 and typ == "/Filespec" and "/EF" in d:
                if "/F" not in d or "/UF" not in d:
                    fail("6.8-2", "file specification of an embedded file without /F and /UF")
                ef = d.EF.get("/F")
                if ef is not None:
                    sd = ef.stream_dict if isinstance(ef, pikepdf.Stream) else ef
                    if "/Subtype" not in sd:
                        fail("6.8-4", "embedded file without a MIME type (/Subtype)")
                    params = sd.get("/Params")
                    if params is None or "/ModDate" not in params:
                        fail("6.8-5", "embedded file without /Params /ModDate")
                af_specs.append(d.objgen)

    # Content streams: device colour operators and transparency on pages.
    for i, page in enumerate(pdf.pages, 1):
        ops = set()
        for operands, op in pikepdf.parse_content_stream(page):
            ops.add(str(op))
            if str(op) in ("k", "K"):
                has_cmyk_ops = True
            if str(op) in ("rg", "RG") and not rgb_intent:
                fail("6.2.4.3-2", f"page {i}: DeviceRGB without an RGB output intent")
        res = page.obj.get("/Resources", {})
        uses_transparency = any(
            float(gs.get("/ca", 1)) < 1 or float(gs.get("/CA", 1)) < 1 or gs.get("/SMask", "/None") != "/None"
            for gs in dict(res.get("/ExtGState", {})).values())
        for xo in dict(res.get("/XObject", {})).values():
            if "/SMask" in xo:
                uses_transparency = True
        if uses_transparency:
            grp = page.obj.get("/Group")
            if grp is None or "/CS" not in grp:
                # Required when there is no output intent; checked always (Folio writes it).
                fail("6.2.10-4", f"page {i} uses transparency without a /Group with /CS")
        for box in ("/MediaBox",):
            if box not in page.obj and box not in page.obj.get("/Parent", {}):
                fail("6.x", f"page {i} has no {box}")
    if has_cmyk_ops:
        fail("6.2.4.3-3", "DeviceCMYK used without a CMYK output intent")
    # 6.8-6 (PDF/A-3): an embedded file is associated with the document or
    # a part of it through an /AF array (checked for the catalog's).
    if af_specs:
        listed = {o.objgen for o in pdf.Root.get("/AF", [])}
        for og in af_specs:
            if og not in listed:
                fail("6.8-6", f"embedded file specification {og} is not in the catalog's /AF")
    check_metadata(pdf, part, conformance)


def check_font(d, conformance):
    sub = d.get("/Subtype")
    name = str(d.get("/BaseFont", "?"))
    if sub == "/Type0":
        desc = d.DescendantFonts[0]
        if desc.get("/Subtype") == "/CIDFontType2" and "/CIDToGIDMap" not in desc:
            fail("6.2.11.3.2-1", f"{name}: CIDFontType2 without CIDToGIDMap")
        if conformance == "U" and "/ToUnicode" not in d:
            fail("6.2.11.7.2-1", f"{name}: no ToUnicode")
        check_embedded(desc, name, d)
        return
    if sub == "/Type3":
        return
    if conformance == "U" and "/ToUnicode" not in d and d.get("/Encoding") not in ("/WinAnsiEncoding", "/MacRomanEncoding", "/StandardEncoding"):
        fail("6.2.11.7.2-1", f"{name}: no ToUnicode")
    check_embedded(d, name, d)


def check_embedded(font, name, top):
    fd = font.get("/FontDescriptor")
    if fd is None:
        fail("6.2.11.4.1-1", f"{name}: no font descriptor (a non-embedded standard font?)")
        return
    prog = next((fd[k] for k in ("/FontFile", "/FontFile2", "/FontFile3") if k in fd), None)
    if prog is None:
        fail("6.2.11.4.1-1", f"{name}: font program not embedded")
        return
    if "/FontFile2" in fd and font.get("/Subtype") == "/CIDFontType2":
        # 6.2.11.5-1: widths in the PDF agree with the embedded program's.
        try:
            tt = TTFont(io.BytesIO(fd.FontFile2.read_bytes()))
        except Exception as e:  # noqa: BLE001
            fail("6.2.11.4.1-2", f"{name}: embedded TrueType unreadable: {e}")
            return
        upem = tt["head"].unitsPerEm
        order = tt.getGlyphOrder()
        hmtx = tt["hmtx"]
        w = list(font.get("/W", []))
        i = 0
        while i < len(w):
            first = int(w[i])
            if isinstance(w[i + 1], pikepdf.Array):
                widths = [float(x) for x in w[i + 1]]
                i += 2
            else:
                last, width = int(w[i + 1]), float(w[i + 2])
                widths = [width] * (last - first + 1)
                i += 3
            for k, width in enumerate(widths):
                gid = first + k  # CIDToGIDMap /Identity
                if gid >= len(order):
                    fail("6.2.11.4.1-2", f"{name}: CID {gid} has no glyph in the embedded font")
                    continue
                adv = hmtx[order[gid]][0] * 1000 / upem
                if abs(adv - width) > 1:
                    fail("6.2.11.5-1", f"{name}: glyph {gid} width {width} in /W, {adv:.1f} in the font")
                    return


def check_metadata(pdf, part, conformance):
    root = pdf.Root
    if "/Metadata" not in root:
        fail("6.6.2.1-1", "catalog has no Metadata stream")
        return
    ms = root.Metadata
    if "/Filter" in ms.stream_dict:
        fail("6.6.2.1-x", "metadata stream is filtered")
    if ms.stream_dict.get("/Type") != "/Metadata" or ms.stream_dict.get("/Subtype") != "/XML":
        fail("6.6.2.1-1", "metadata stream not /Type /Metadata /Subtype /XML")
    data = ms.read_bytes()
    head = re.match(rb"<\?xpacket ([^?]*)\?>", data)
    if not head:
        fail("6.6.2.1-2", "no xpacket header")
    elif b"bytes=" in head.group(1) or b"encoding=" in head.group(1):
        fail("6.6.2.1-3", "xpacket header has bytes or encoding")
    try:
        tree = ET.fromstring(re.sub(rb"<\?xpacket[^?]*\?>", b"", data))
    except ET.ParseError as e:
        fail("6.6.2.1-4", f"XMP is not well-formed: {e}")
        return
    def text(path):
        el = tree.find(path, NS)
        return None if el is None else (el.text or "")
    if text(".//pdfaid:part") != str(part):
        fail("6.6.4-1", f"pdfaid:part is {text('.//pdfaid:part')!r}, want {part}")
    if text(".//pdfaid:conformance") != conformance:
        fail("6.6.4-2", f"pdfaid:conformance is {text('.//pdfaid:conformance')!r}, want {conformance}")
    # 6.6.2.3.2/3: a property of a schema PDF/A does not predefine is
    # described by a pdfaExtension schema (namespaceURI and property name).
    predefined = set(NS.values()) | {"http://www.aiim.org/pdfa/ns/extension/", "http://www.aiim.org/pdfa/ns/schema#",
                                     "http://www.aiim.org/pdfa/ns/property#", "http://ns.adobe.com/xap/1.0/mm/"}
    described = {}
    for sch in tree.iter("{http://www.aiim.org/pdfa/ns/schema#}namespaceURI"):
        parent = [p for p in tree.iter() if sch in list(p)][0]
        names = {n.text for n in parent.iter("{http://www.aiim.org/pdfa/ns/property#}name")}
        described[sch.text] = names
    for desc in tree.iter("{http://www.w3.org/1999/02/22-rdf-syntax-ns#}Description"):
        for prop in desc:
            ns, _, local = prop.tag[1:].partition("}")
            if ns in predefined:
                continue
            if ns not in described:
                fail("6.6.2.3.2-1", f"XMP property {local} of {ns} has no pdfaExtension schema")
            elif local not in described[ns]:
                fail("6.6.2.3.3-1", f"XMP property {local} of {ns} is not described in its extension schema")
    # 6.6.2.3.1: Info entries have equal XMP properties.
    info = pdf.trailer.get("/Info", {})
    pairs = {
        "/Title": ".//dc:title/rdf:Alt/rdf:li",
        "/Author": ".//dc:creator/rdf:Seq/rdf:li",
        "/Subject": ".//dc:description/rdf:Alt/rdf:li",
        "/Keywords": ".//pdf:Keywords",
        "/Creator": ".//xmp:CreatorTool",
        "/Producer": ".//pdf:Producer",
    }
    for key, xp in pairs.items():
        if key in info:
            got = text(xp)
            if got != str(info[key]):
                fail("6.6.2.3.1-1", f"Info {key} {str(info[key])!r} but XMP {got!r}")
    if "/Author" in info and len(tree.findall(".//dc:creator/rdf:Seq/rdf:li", NS)) != 1:
        fail("6.6.2.3.1-1", "dc:creator is not a sequence of one name")
    for key, xp in (("/CreationDate", ".//xmp:CreateDate"), ("/ModDate", ".//xmp:ModifyDate")):
        if key not in info:
            continue
        pd = pdf_date(str(info[key]))
        got = text(xp)
        if pd is None or got is None:
            fail("6.6.2.3.1-1", f"Info {key} {str(info[key])!r} but XMP {got!r}")
            continue
        if isinstance(pd, tuple):
            fail("6.6.2.3.1-1", f"Info {key} has no time zone")
            continue
        if xmp_date(got) != pd:
            fail("6.6.2.3.1-1", f"Info {key} {str(info[key])!r} differs from XMP {got!r}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)
