package fpdf

// Folio addition: PDF/A identification (XMP packet in the catalog, an
// sRGB output intent, a document ID) and AES-256 encryption (ISO 32000-2,
// standard security handler revision 6, crypt filter AESV3).

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"time"
)

// businessType holds the settings of a PDF/A or encrypted document.
type businessType struct {
	pdfa      bool
	icc       []byte // the output intent's ICC profile (PDF/A)
	iccInfo   string // the output intent's OutputConditionIdentifier
	id        []byte // the document ID written in the trailer
	aes       *aesV3 // nil: not encrypted with AES-256
	xmpObj    int    // object number of the XMP stream, once written
	intentObj int    // object number of the output intent, once written
	aesObj    int    // object number of the encryption dictionary
	af        *AssociatedFile
	afObj     int // object number of the associated file's file specification
}

// AssociatedFile is a file embedded in the document and associated with
// it as a whole (PDF/A-3, ISO 32000-2 14.13): the catalog's /AF and the
// EmbeddedFiles name tree refer to its file specification.
type AssociatedFile struct {
	Name         string // file name (/F and /UF)
	MIME         string // media type, written as the stream's /Subtype
	Relationship string // /AFRelationship: Data, Alternative, Source, ...
	Description  string
	Content      []byte
	Modified     time.Time // /Params /ModDate
}

// SetAssociatedFile embeds a and associates it with the document.
func (f *Fpdf) SetAssociatedFile(a AssociatedFile) {
	f.biz.af = &a
	if f.pdfVersion < pdfVers1_7 {
		f.pdfVersion = pdfVers1_7
	}
}

// putassociatedfile writes the embedded file stream and its file specification.
func (f *Fpdf) putassociatedfile() {
	a := f.biz.af
	if a == nil {
		return
	}
	content := a.Content
	filter := ""
	if f.compress {
		mem := xmem.compress(content)
		content = append([]byte(nil), mem.bytes()...)
		mem.release()
		filter = " /Filter /FlateDecode"
	}
	f.newobj()
	f.outf("<</Type /EmbeddedFile /Subtype /%s%s /Length %d /Params <</ModDate %s /Size %d /CheckSum <%s>>>>>",
		pdfName(a.MIME), filter, len(content), f.textstring(pdfDate(a.Modified)), len(a.Content), checksum(a.Content))
	f.putstream(content)
	f.out("endobj")
	stream := f.n
	f.newobj()
	f.outf("<</Type /Filespec /F %s /UF %s /EF <</F %d 0 R /UF %d 0 R>> /AFRelationship /%s /Desc %s>>",
		f.textstring(a.Name), f.textstring(utf8toutf16(a.Name)), stream, stream, pdfName(a.Relationship), f.textstring(utf8toutf16(a.Description)))
	f.out("endobj")
	f.biz.afObj = f.n
}

// pdfName escapes s as a PDF name (without the slash): "text/xml" is text#2Fxml.
func pdfName(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '!' || c > '~' || strings.IndexByte("#/%()<>[]{}", c) >= 0 {
			b = append(b, fmt.Sprintf("#%02X", c)...)
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

// pdfVers2_0 is written by documents encrypted with AES-256 (revision 6).
const pdfVers2_0 = pdfVersion(uint16(2)<<8 | uint16(0))

// pdfVers1_7 is written by documents with an associated file (PDF/A-3).
const pdfVers1_7 = pdfVersion(uint16(1)<<8 | uint16(7))

// SetPDFA makes the document carry what PDF/A requires of the writer: the
// catalog refers to the XMP packet (SetXmpMetadata) and to an output
// intent with the ICC profile icc (an RGB profile named identifier), and
// every page has a transparency group with a blending colour space. The
// caller writes the pdfaid entries into the XMP packet and keeps the
// document free of what PDF/A forbids.
func (f *Fpdf) SetPDFA(icc []byte, identifier string) {
	f.biz.pdfa = true
	f.biz.icc = icc
	f.biz.iccInfo = identifier
	if f.pdfVersion < pdfVers1_4 {
		f.pdfVersion = pdfVers1_4 // pages get their /Group
	}
}

// SetDocumentID sets the file identifier written in the trailer (both
// halves). Without one, every document gets the first 16 bytes of the
// SHA-256 of its body: the same document, the same ID (PDF/A and
// encryption need one).
func (f *Fpdf) SetDocumentID(id []byte) { f.biz.id = append([]byte(nil), id...) }

// Permission bits of an encrypted document (ISO 32000-2, table 22).
const (
	PermPrint         = 1<<2 | 1<<11 // print, in high quality too
	PermModify        = 1<<3 | 1<<5 | 1<<8 | 1<<10
	PermCopy          = 1 << 4
	PermAccessibility = 1 << 9
)

// SetEncryptionAES256 encrypts the document with AES-256 (revision 6):
// it opens with userPassword (may be empty: it opens without one) and
// grants perms (Perm* bits) to whoever opens it without ownerPassword.
// random supplies the file key, salts and IVs (crypto/rand.Reader). It
// must be called before the document is closed.
func (f *Fpdf) SetEncryptionAES256(userPassword, ownerPassword string, perms uint32, random io.Reader) error {
	a, err := newAESV3([]byte(userPassword), []byte(ownerPassword), perms, random)
	if err != nil {
		return err
	}
	f.biz.aes = a
	return nil
}

// putbusiness writes the output intent and the encryption dictionary;
// called by enddoc before the catalog.
func (f *Fpdf) putbusiness() {
	f.putassociatedfile()
	if f.biz.pdfa && len(f.biz.icc) > 0 {
		f.newobj()
		icc := f.biz.icc
		if f.compress {
			mem := xmem.compress(icc)
			icc = append([]byte(nil), mem.bytes()...)
			mem.release()
			f.outf("<</N 3 /Alternate /DeviceRGB /Filter /FlateDecode /Length %d>>", len(icc))
		} else {
			f.outf("<</N 3 /Alternate /DeviceRGB /Length %d>>", len(icc))
		}
		f.putstream(icc)
		f.out("endobj")
		profile := f.n
		f.newobj()
		f.outf("<</Type /OutputIntent /S /GTS_PDFA1 /OutputConditionIdentifier %s /Info %s /DestOutputProfile %d 0 R>>",
			f.textstring(f.biz.iccInfo), f.textstring(f.biz.iccInfo), profile)
		f.out("endobj")
		f.biz.intentObj = f.n
	}
	if a := f.biz.aes; a != nil {
		f.newobj()
		f.biz.aesObj = f.n
		f.out("<</Filter /Standard /V 5 /R 6 /Length 256")
		f.out("/CF <</StdCF <</Type /CryptFilter /CFM /AESV3 /AuthEvent /DocOpen /Length 32>>>> /StmF /StdCF /StrF /StdCF")
		f.outf("/O <%s> /U <%s> /OE <%s> /UE <%s> /Perms <%s>",
			hex.EncodeToString(a.o), hex.EncodeToString(a.u), hex.EncodeToString(a.oe), hex.EncodeToString(a.ue), hex.EncodeToString(a.perms))
		f.outf("/P %d /EncryptMetadata true>>", int32(a.p))
		f.out("endobj")
		if f.pdfVersion < pdfVers2_0 {
			f.pdfVersion = pdfVers2_0
		}
	}
}

// putbusinesscatalog adds the XMP packet and the output intent to the catalog.
func (f *Fpdf) putbusinesscatalog() {
	if f.biz.xmpObj > 0 {
		f.outf("/Metadata %d 0 R", f.biz.xmpObj)
	}
	if f.biz.intentObj > 0 {
		f.outf("/OutputIntents [%d 0 R]", f.biz.intentObj)
	}
	if f.biz.afObj > 0 {
		f.outf("/AF [%d 0 R]", f.biz.afObj)
	}
}

// putbusinesstrailer adds the document ID and the encryption dictionary to the trailer.
func (f *Fpdf) putbusinesstrailer() {
	if f.biz.aes != nil {
		f.outf("/Encrypt %d 0 R", f.biz.aesObj)
	}
	if !f.protect.encrypted {
		raw := f.biz.id
		if len(raw) == 0 {
			sum := sha256.Sum256(f.buffer.Bytes())
			raw = sum[:16]
		}
		id := hex.EncodeToString(raw)
		f.outf("/ID [<%s><%s>]", id, id)
	}
}

// encryptedString is a text string as an encrypted document writes it:
// AES-256-CBC with a random IV, in hexadecimal.
func (f *Fpdf) encryptedString(s string) string {
	return "<" + hex.EncodeToString(f.biz.aes.encrypt([]byte(s))) + ">"
}

// encryptStream encrypts the data of the stream of the current object and
// corrects the /Length its dictionary, just written, gives.
func (f *Fpdf) encryptStream(b []byte) []byte {
	enc := f.biz.aes.encrypt(b)
	start := f.offsets[f.n]
	buf := f.buffer.Bytes()
	dict := buf[start:]
	i := bytes.LastIndex(dict, []byte("/Length "))
	if i < 0 {
		f.SetErrorf("encrypting stream of object %d: no /Length", f.n)
		return enc
	}
	j := i + len("/Length ")
	k := j
	for k < len(dict) && dict[k] >= '0' && dict[k] <= '9' {
		k++
	}
	if n, err := strconv.Atoi(string(dict[j:k])); err != nil || n != len(b) {
		f.SetErrorf("encrypting stream of object %d: /Length is not the stream's", f.n)
		return enc
	}
	rest := append([]byte(strconv.Itoa(len(enc))), dict[k:]...)
	f.buffer.Truncate(start + j)
	f.buffer.Write(rest)
	return enc
}

// aesV3 is the standard security handler, revision 6.
type aesV3 struct {
	key                   []byte // the file encryption key
	o, u, oe, ue, perms   []byte
	p                     uint32
	random                io.Reader
	block                 cipher.Block
	scratch, ivs, padding []byte
}

// Bits of P that revision 6 requires set (7, 8, 13–32).
const permReserved = 0xFFFFF0C0

func newAESV3(user, owner []byte, perms uint32, random io.Reader) (*aesV3, error) {
	if len(owner) == 0 {
		owner = user
	}
	user, owner = user[:min(len(user), 127)], owner[:min(len(owner), 127)]
	a := &aesV3{random: random, p: permReserved | perms&^3}
	// The file key, the four 8-byte salts and 4 random bytes for Perms.
	r := make([]byte, 32+32+4)
	if _, err := io.ReadFull(random, r); err != nil {
		return nil, err
	}
	a.key = r[:32]
	uvs, uks, ovs, oks := r[32:40], r[40:48], r[48:56], r[56:64]
	a.u = append(append(hash2B(user, uvs, nil), uvs...), uks...)
	a.ue = aesNoIV(hash2B(user, uks, nil), a.key)
	a.o = append(append(hash2B(owner, ovs, a.u), ovs...), oks...)
	a.oe = aesNoIV(hash2B(owner, oks, a.u), a.key)
	perm := make([]byte, 16)
	binary.LittleEndian.PutUint32(perm, a.p)
	copy(perm[4:], []byte{0xff, 0xff, 0xff, 0xff, 'T', 'a', 'd', 'b'})
	copy(perm[12:], r[64:68])
	a.perms = aesNoIV(a.key, perm)
	block, err := aes.NewCipher(a.key)
	if err != nil {
		return nil, err
	}
	a.block = block
	return a, nil
}

// encrypt returns IV || AES-256-CBC(data padded as PKCS #7).
func (a *aesV3) encrypt(data []byte) []byte {
	pad := 16 - len(data)%16
	out := make([]byte, 16+len(data)+pad)
	if _, err := io.ReadFull(a.random, out[:16]); err != nil {
		panic(errors.New("fpdf: no randomness for AES IV"))
	}
	copy(out[16:], data)
	for i := 16 + len(data); i < len(out); i++ {
		out[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(a.block, out[:16]).CryptBlocks(out[16:], out[16:])
	return out
}

// aesNoIV encrypts data (a multiple of 16 bytes) with AES-256-CBC, a zero IV
// and no padding, as the U/O entries' keys are.
func aesNoIV(key, data []byte) []byte {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic(err)
	}
	out := make([]byte, len(data))
	cipher.NewCBCEncrypter(block, make([]byte, 16)).CryptBlocks(out, data)
	return out
}

// hash2B is algorithm 2.B of ISO 32000-2 (7.6.4.3.4): the hash of a
// password with a salt and, for the owner, the U entry.
func hash2B(password, salt, udata []byte) []byte {
	h := sha256.New()
	h.Write(password)
	h.Write(salt)
	h.Write(udata)
	k := h.Sum(nil)
	// K1 and E are at most 64 × (127 + 64 + 48) bytes; made once.
	buf := make([]byte, 2*64*(len(password)+64+len(udata)))
	var e []byte
	for i := 0; i < 64 || int(e[len(e)-1]) > i-32; i++ {
		unit := len(password) + len(k) + len(udata)
		k1 := buf[:0]
		for j := 0; j < 64; j++ {
			k1 = append(k1, password...)
			k1 = append(k1, k...)
			k1 = append(k1, udata...)
		}
		block, _ := aes.NewCipher(k[:16])
		e = buf[64*unit : 128*unit]
		cipher.NewCBCEncrypter(block, k[16:32]).CryptBlocks(e, k1)
		sum := 0
		for _, b := range e[:16] {
			sum += int(b)
		}
		var next hash.Hash
		switch sum % 3 {
		case 0:
			next = sha256.New()
		case 1:
			next = sha512.New384()
		default:
			next = sha512.New()
		}
		next.Write(e)
		k = next.Sum(k[:0:0])
	}
	return k[:32]
}

// pdfDate writes t as a PDF date with its offset: D:20260101120000Z or
// D:20260101120000+01'00'.
func pdfDate(t time.Time) string {
	s := "D:" + t.Format("20060102150405")
	_, off := t.Zone()
	if off == 0 {
		return s + "Z"
	}
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%s%c%02d'%02d'", s, sign, off/3600, off/60%60)
}
