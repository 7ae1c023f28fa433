#!/usr/bin/env python3
"""Writes invoice.odt, the example invoice (testdata/templates/invoice.json)
as a Carbone template: the same header (logo, company), footer (IBAN, BIC,
"Page N of M" fields), table, totals and payment block as Folio's, in Noto
Sans. Carbone fills the {d.…} markers; the line-item table repeats its
second row ({d.items[i]} … {d.items[i+1]}). The ODT is committed; this
script is its source: edit here, run `python3 make-odt.py`, commit both.
Standard library only."""
import os
import zipfile

here = os.path.dirname(os.path.abspath(__file__))

NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
    'xmlns:xlink="http://www.w3.org/1999/xlink" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
    'office:version="1.3"'
)

FONTS = """<office:font-face-decls>
  <style:font-face style:name="Noto Sans" svg:font-family="'Noto Sans'" style:font-family-generic="swiss" style:font-pitch="variable"/>
</office:font-face-decls>"""


def image(name, file, w, h, anchor="as-char"):
    return (f'<draw:frame draw:name="{name}" text:anchor-type="{anchor}" svg:width="{w}" svg:height="{h}">'
            f'<draw:image xlink:href="Pictures/{file}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/></draw:frame>')


def cell(style, *paras, ptype="P"):
    body = "".join(f'<text:p text:style-name="{ptype}">{p}</text:p>' for p in paras)
    return f'<table:table-cell table:style-name="{style}" office:value-type="string">{body}</table:table-cell>'


STYLES = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-styles {NS}>
{FONTS}
<office:styles>
  <style:default-style style:family="paragraph">
    <style:paragraph-properties fo:margin-top="0mm" fo:margin-bottom="0mm"/>
    <style:text-properties style:font-name="Noto Sans" fo:font-size="10pt" fo:color="#222222" fo:language="en" fo:country="GB"/>
  </style:default-style>
  <style:style style:name="Standard" style:family="paragraph"/>
  <style:style style:name="HeaderCompany" style:family="paragraph">
    <style:paragraph-properties fo:text-align="end"/>
    <style:text-properties fo:font-size="12pt" fo:font-weight="bold"/>
  </style:style>
  <style:style style:name="HeaderSmall" style:family="paragraph">
    <style:paragraph-properties fo:text-align="end"/>
    <style:text-properties fo:font-size="8pt" fo:color="#555555"/>
  </style:style>
  <style:style style:name="HeaderRule" style:family="paragraph">
    <style:paragraph-properties fo:margin-top="2mm" fo:border-bottom="0.5pt solid #bbbbbb" fo:padding="0mm"/>
    <style:text-properties fo:font-size="2pt"/>
  </style:style>
  <style:style style:name="FooterText" style:family="paragraph">
    <style:paragraph-properties fo:text-align="center" fo:border-top="0.5pt solid #bbbbbb" fo:padding-top="1.5mm"/>
    <style:text-properties fo:font-size="8pt" fo:color="#555555"/>
  </style:style>
</office:styles>
<office:automatic-styles>
  <style:page-layout style:name="A4">
    <style:page-layout-properties fo:page-width="210mm" fo:page-height="297mm" style:print-orientation="portrait"
      fo:margin-top="15mm" fo:margin-bottom="15mm" fo:margin-left="18mm" fo:margin-right="18mm"/>
    <style:header-style><style:header-footer-properties fo:min-height="0mm" fo:margin-bottom="6mm"/></style:header-style>
    <style:footer-style><style:header-footer-properties fo:min-height="0mm" fo:margin-top="5mm"/></style:footer-style>
  </style:page-layout>
  <style:style style:name="HT" style:family="table"><style:table-properties style:width="174mm" table:align="left"/></style:style>
  <style:style style:name="HT.A" style:family="table-column"><style:table-column-properties style:column-width="58mm"/></style:style>
  <style:style style:name="HT.B" style:family="table-column"><style:table-column-properties style:column-width="116mm"/></style:style>
  <style:style style:name="HT.1" style:family="table-cell"><style:table-cell-properties fo:padding="0mm" fo:border="none" style:vertical-align="top"/></style:style>
</office:automatic-styles>
<office:master-styles>
  <style:master-page style:name="Standard" style:page-layout-name="A4">
    <style:header>
      <table:table table:name="Header" table:style-name="HT">
        <table:table-column table:style-name="HT.A"/><table:table-column table:style-name="HT.B"/>
        <table:table-row>
          {cell("HT.1", image("logo", "logo.png", "42mm", "14mm"), ptype="Standard")}
          {cell("HT.1", "{d.company.name}", ptype="HeaderCompany").replace("</table:table-cell>", "")}<text:p text:style-name="HeaderSmall">{{d.company.street}} · {{d.company.city}}<text:line-break/>{{d.company.email}} · VAT ID {{d.company.vatId}}</text:p></table:table-cell>
        </table:table-row>
      </table:table>
      <text:p text:style-name="HeaderRule"/>
    </style:header>
    <style:footer>
      <text:p text:style-name="FooterText">{{d.company.name}} · IBAN {{d.company.iban}} · BIC {{d.company.bic}} · Page <text:page-number text:select-page="current">1</text:page-number> of <text:page-count>2</text:page-count></text:p>
    </style:footer>
  </style:master-page>
</office:master-styles>
</office:document-styles>
"""

border = 'fo:border="0.3pt solid #999999" fo:padding="1mm"'
CONTENT = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {NS}>
{FONTS}
<office:automatic-styles>
  <style:style style:name="H1" style:family="paragraph"><style:paragraph-properties fo:margin-bottom="2mm"/><style:text-properties fo:font-size="17pt" fo:font-weight="bold"/></style:style>
  <style:style style:name="H3" style:family="paragraph"><style:paragraph-properties fo:margin-bottom="1.5mm"/><style:text-properties fo:font-size="12pt" fo:font-weight="bold"/></style:style>
  <style:style style:name="Label" style:family="paragraph"><style:text-properties fo:font-size="9pt" fo:font-weight="bold" fo:color="#555555"/></style:style>
  <style:style style:name="Bold" style:family="paragraph"><style:text-properties fo:font-weight="bold"/></style:style>
  <style:style style:name="Cell" style:family="paragraph"><style:text-properties fo:font-size="8.5pt"/></style:style>
  <style:style style:name="CellR" style:family="paragraph"><style:paragraph-properties fo:text-align="end"/><style:text-properties fo:font-size="8.5pt"/></style:style>
  <style:style style:name="CellB" style:family="paragraph"><style:text-properties fo:font-size="8.5pt" fo:font-weight="bold"/></style:style>
  <style:style style:name="CellBR" style:family="paragraph"><style:paragraph-properties fo:text-align="end"/><style:text-properties fo:font-size="8.5pt" fo:font-weight="bold"/></style:style>
  <style:style style:name="Notes" style:family="paragraph"><style:paragraph-properties fo:margin-top="3mm" fo:margin-bottom="3mm"/><style:text-properties fo:font-size="9pt" fo:font-style="italic"/></style:style>
  <style:style style:name="Rule" style:family="paragraph"><style:paragraph-properties fo:border-bottom="0.5pt solid #bbbbbb" fo:padding="0mm" fo:margin-bottom="3mm"/><style:text-properties fo:font-size="2pt"/></style:style>
  <style:style style:name="Center" style:family="paragraph"><style:paragraph-properties fo:margin-left="17mm"/><style:text-properties fo:font-size="8pt"/></style:style>
  <style:style style:name="Right" style:family="paragraph"><style:paragraph-properties fo:text-align="end"/></style:style>
  <style:style style:name="Space" style:family="paragraph"><style:text-properties fo:font-size="6pt"/></style:style>

  <style:style style:name="Top" style:family="table"><style:table-properties style:width="174mm" table:align="left"/></style:style>
  <style:style style:name="Top.A" style:family="table-column"><style:table-column-properties style:column-width="90mm"/></style:style>
  <style:style style:name="Top.B" style:family="table-column"><style:table-column-properties style:column-width="84mm"/></style:style>
  <style:style style:name="KV" style:family="table"><style:table-properties style:width="84mm" table:align="left"/></style:style>
  <style:style style:name="KV.A" style:family="table-column"><style:table-column-properties style:column-width="38mm"/></style:style>
  <style:style style:name="KV.B" style:family="table-column"><style:table-column-properties style:column-width="46mm"/></style:style>
  <style:style style:name="Plain" style:family="table-cell"><style:table-cell-properties fo:padding="0.4mm" fo:border="none" style:vertical-align="top"/></style:style>

  <style:style style:name="Items" style:family="table"><style:table-properties style:width="174mm" table:align="left" fo:margin-top="4mm"/></style:style>
  <style:style style:name="Items.A" style:family="table-column"><style:table-column-properties style:column-width="9mm"/></style:style>
  <style:style style:name="Items.B" style:family="table-column"><style:table-column-properties style:column-width="91mm"/></style:style>
  <style:style style:name="Items.C" style:family="table-column"><style:table-column-properties style:column-width="16mm"/></style:style>
  <style:style style:name="Items.D" style:family="table-column"><style:table-column-properties style:column-width="28mm"/></style:style>
  <style:style style:name="Items.E" style:family="table-column"><style:table-column-properties style:column-width="30mm"/></style:style>
  <style:style style:name="Row" style:family="table-row"><style:table-row-properties fo:keep-together="always"/></style:style>
  <style:style style:name="Th" style:family="table-cell"><style:table-cell-properties {border} fo:background-color="#eeeeee"/></style:style>
  <style:style style:name="Td" style:family="table-cell"><style:table-cell-properties {border}/></style:style>

  <style:style style:name="Sum" style:family="table"><style:table-properties style:width="174mm" table:align="left"/></style:style>
  <style:style style:name="Sum.A" style:family="table-column"><style:table-column-properties style:column-width="120mm"/></style:style>
  <style:style style:name="Sum.B" style:family="table-column"><style:table-column-properties style:column-width="27mm"/></style:style>
  <style:style style:name="Sum.C" style:family="table-column"><style:table-column-properties style:column-width="27mm"/></style:style>

  <style:style style:name="Pay" style:family="table"><style:table-properties style:width="174mm" table:align="left" style:may-break-between-rows="false"/></style:style>
  <style:style style:name="Pay.A" style:family="table-column"><style:table-column-properties style:column-width="130mm"/></style:style>
  <style:style style:name="Pay.B" style:family="table-column"><style:table-column-properties style:column-width="44mm"/></style:style>
</office:automatic-styles>
<office:body><office:text>
  <text:p text:style-name="H1">Invoice {{d.invoiceNumber}}</text:p>
  <table:table table:name="Top" table:style-name="Top">
    <table:table-column table:style-name="Top.A"/><table:table-column table:style-name="Top.B"/>
    <table:table-row>
      {cell("Plain", "Bill to", ptype="Label").replace("</table:table-cell>", "")}<text:p>{{d.customer.name}}<text:line-break/>{{d.customer.street}}<text:line-break/>{{d.customer.postalCode}} {{d.customer.city}}<text:line-break/>{{d.customer.countryUpper}}</text:p></table:table-cell>
      <table:table-cell table:style-name="Plain" office:value-type="string">
        <table:table table:name="KV" table:style-name="KV">
          <table:table-column table:style-name="KV.A"/><table:table-column table:style-name="KV.B"/>
          <table:table-row>{cell("Plain", "Invoice number", ptype="Bold")}{cell("Plain", "{d.invoiceNumber}")}</table:table-row>
          <table:table-row>{cell("Plain", "Invoice date", ptype="Bold")}{cell("Plain", "{d.issueDate}")}</table:table-row>
          <table:table-row>{cell("Plain", "Due date", ptype="Bold")}{cell("Plain", "{d.dueDate}")}</table:table-row>
          <table:table-row>{cell("Plain", "Customer number", ptype="Bold")}{cell("Plain", "{d.customer.number}")}</table:table-row>
        </table:table>
      </table:table-cell>
    </table:table-row>
  </table:table>
  <table:table table:name="Items" table:style-name="Items">
    <table:table-column table:style-name="Items.A"/><table:table-column table:style-name="Items.B"/><table:table-column table:style-name="Items.C"/><table:table-column table:style-name="Items.D"/><table:table-column table:style-name="Items.E"/>
    <table:table-header-rows><table:table-row>{cell("Th", "#", ptype="CellB")}{cell("Th", "Description", ptype="CellB")}{cell("Th", "Qty", ptype="CellBR")}{cell("Th", "Unit price", ptype="CellBR")}{cell("Th", "Amount", ptype="CellBR")}</table:table-row></table:table-header-rows>
    <table:table-row table:style-name="Row">{cell("Td", "{d.items[i].pos}", ptype="Cell")}{cell("Td", "{d.items[i].description}", ptype="Cell")}{cell("Td", "{d.items[i].quantity}", ptype="CellR")}{cell("Td", "{d.items[i].unitPrice}", ptype="CellR")}{cell("Td", "{d.items[i].amount}", ptype="CellR")}</table:table-row>
    <table:table-row table:style-name="Row">{cell("Td", "{d.items[i+1].pos}", ptype="Cell")}{cell("Td", "{d.items[i+1].description}", ptype="Cell")}{cell("Td", "{d.items[i+1].quantity}", ptype="CellR")}{cell("Td", "{d.items[i+1].unitPrice}", ptype="CellR")}{cell("Td", "{d.items[i+1].amount}", ptype="CellR")}</table:table-row>
  </table:table>
  <table:table table:name="Sum" table:style-name="Sum">
    <table:table-column table:style-name="Sum.A"/><table:table-column table:style-name="Sum.B"/><table:table-column table:style-name="Sum.C"/>
    <table:table-row>{cell("Plain", "", ptype="Cell")}{cell("Plain", "Subtotal", ptype="CellBR")}{cell("Plain", "{d.subtotal}", ptype="CellR")}</table:table-row>
    <table:table-row>{cell("Plain", "", ptype="Cell")}{cell("Plain", "VAT {d.vatRate}%", ptype="CellBR")}{cell("Plain", "{d.vat}", ptype="CellR")}</table:table-row>
    <table:table-row>{cell("Plain", "", ptype="Cell")}{cell("Plain", "Total due", ptype="CellBR")}{cell("Plain", "{d.total}", ptype="CellBR")}</table:table-row>
  </table:table>
  <text:p text:style-name="Notes">{{d.notes}}</text:p>
  <text:p text:style-name="Rule"/>
  <table:table table:name="Payment" table:style-name="Pay">
    <table:table-column table:style-name="Pay.A"/><table:table-column table:style-name="Pay.B"/>
    <table:table-row table:style-name="Row">
      <table:table-cell table:style-name="Plain" office:value-type="string">
        <text:p text:style-name="H3">Payment</text:p>
        <text:p>Please transfer {{d.total}} by {{d.dueDateLong}} to IBAN {{d.company.iban}} (BIC {{d.company.bic}}), quoting {{d.invoiceNumber}}. Scan the code with your banking app to pay.</text:p>
        <text:p text:style-name="Space"/>
        <text:p>{image("barcode", "barcode.png", "49mm", "10mm")}</text:p>
        <text:p text:style-name="Center">{{d.invoiceNumber}}</text:p>
      </table:table-cell>
      {cell("Plain", image("qr", "qr.png", "32mm", "32mm"), ptype="Right")}
    </table:table-row>
  </table:table>
</office:text></office:body>
</office:document-content>
"""

MANIFEST = """<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">
 <manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>
 <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
 <manifest:file-entry manifest:full-path="styles.xml" manifest:media-type="text/xml"/>
 <manifest:file-entry manifest:full-path="Pictures/logo.png" manifest:media-type="image/png"/>
 <manifest:file-entry manifest:full-path="Pictures/qr.png" manifest:media-type="image/png"/>
 <manifest:file-entry manifest:full-path="Pictures/barcode.png" manifest:media-type="image/png"/>
</manifest:manifest>
"""

out = os.path.join(here, "invoice.odt")
with zipfile.ZipFile(out, "w") as z:
    # The mimetype entry comes first and uncompressed (ODF 1.3, 3.3).
    z.writestr(zipfile.ZipInfo("mimetype", date_time=(2026, 1, 1, 0, 0, 0)), "application/vnd.oasis.opendocument.text", compress_type=zipfile.ZIP_STORED)
    for name, body in (("META-INF/manifest.xml", MANIFEST), ("content.xml", CONTENT), ("styles.xml", STYLES)):
        z.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), body, compress_type=zipfile.ZIP_DEFLATED)
    for png in ("logo.png", "qr.png", "barcode.png"):
        with open(os.path.join(here, png), "rb") as f:
            z.writestr(zipfile.ZipInfo("Pictures/" + png, date_time=(2026, 1, 1, 0, 0, 0)), f.read(), compress_type=zipfile.ZIP_STORED)
print(out)
