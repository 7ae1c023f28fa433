// Command cldrgen writes render/expr/locale's tables from the Unicode CLDR
// JSON data (the packages cldr-core, cldr-numbers-full and cldr-dates-full,
// as the Unicode Consortium publishes them). It keeps every locale CLDR
// rates "modern" and only what formatting needs: number symbols, digits and
// patterns, currency symbols and minor units, and the Gregorian calendar's
// names and patterns. Equal parts are written once and shared.
//
// To regenerate (the data is not kept in the repository):
//
//	mkdir /tmp/cldr && cd /tmp/cldr
//	npm pack cldr-core@48.2.0 cldr-numbers-full@48.2.0 cldr-dates-full@48.2.0
//	for f in *.tgz; do mkdir ${f%.tgz} && tar xzf $f -C ${f%.tgz}; done
//	cd - && go run ./render/expr/locale/internal/cldrgen -cldr /tmp/cldr -version 48.2.0
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	dir := flag.String("cldr", "/tmp/cldr", "folder holding the extracted cldr-core, cldr-numbers-full and cldr-dates-full packages")
	version := flag.String("version", "48.2.0", "CLDR JSON package version")
	out := flag.String("out", "render/expr/locale/tables.go", "Go file to write")
	flag.Parse()
	g := &gen{root: *dir, version: *version}
	src, err := g.run()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

type gen struct {
	root, version string
}

func (g *gen) pkg(name string) string {
	return filepath.Join(g.root, name+"-"+g.version, "package")
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// numbers, dates and locale mirror the types in render/expr/locale.
type numbers struct {
	Digits                                string
	Decimal, Group, Percent, Minus        string
	DecimalPattern, PercentPattern        string
	CurrencyPattern, CurrencyAlphaPattern string
	MinGroup                              int
}

type dates struct {
	Months, MonthsAbbr, MonthsStandalone [12]string
	Days, DaysAbbr                       [7]string
	AM, PM                               string
	Full, Long, Medium, Short            string
	TimeShort, TimeMedium                string
	DateTime                             string
}

type currency struct{ Code, Symbol string }

type entry struct {
	tag            string
	num, latn      string // keys of numbers
	date, currency string
}

func (g *gen) run() ([]byte, error) {
	var cov struct {
		Effective map[string]string `json:"effectiveCoverageLevels"`
	}
	if err := readJSON(filepath.Join(g.pkg("cldr-core"), "coverageLevels.json"), &cov); err != nil {
		return nil, err
	}
	var tags []string
	for tag, level := range cov.Effective {
		if level == "modern" && tag != "und" {
			tags = append(tags, tag)
		}
	}
	sort.Strings(tags)

	var ns struct {
		Supplemental struct {
			NumberingSystems map[string]struct {
				Digits string `json:"_digits"`
				Type   string `json:"_type"`
			} `json:"numberingSystems"`
		} `json:"supplemental"`
	}
	if err := readJSON(filepath.Join(g.pkg("cldr-core"), "supplemental", "numberingSystems.json"), &ns); err != nil {
		return nil, err
	}
	var cd struct {
		Supplemental struct {
			CurrencyData struct {
				Fractions map[string]map[string]string `json:"fractions"`
			} `json:"currencyData"`
		} `json:"supplemental"`
	}
	if err := readJSON(filepath.Join(g.pkg("cldr-core"), "supplemental", "currencyData.json"), &cd); err != nil {
		return nil, err
	}

	nums := map[string]numbers{}
	dats := map[string]dates{}
	curs := map[string][]currency{}
	var entries []entry
	for _, tag := range tags {
		var e entry
		e.tag = tag
		var nf struct {
			Main map[string]struct {
				Numbers map[string]json.RawMessage `json:"numbers"`
			} `json:"main"`
		}
		if err := readJSON(filepath.Join(g.pkg("cldr-numbers-full"), "main", tag, "numbers.json"), &nf); err != nil {
			return nil, err
		}
		n := nf.Main[tag].Numbers
		var defNS, minGroup string
		json.Unmarshal(n["defaultNumberingSystem"], &defNS)
		json.Unmarshal(n["minimumGroupingDigits"], &minGroup)
		build := func(system string) (numbers, error) {
			var sym map[string]string
			var dec, pct, cur map[string]json.RawMessage
			if err := json.Unmarshal(n["symbols-numberSystem-"+system], &sym); err != nil {
				return numbers{}, fmt.Errorf("%s: symbols %s: %v", tag, system, err)
			}
			json.Unmarshal(n["decimalFormats-numberSystem-"+system], &dec)
			json.Unmarshal(n["percentFormats-numberSystem-"+system], &pct)
			json.Unmarshal(n["currencyFormats-numberSystem-"+system], &cur)
			str := func(m map[string]json.RawMessage, k string) string {
				var s string
				json.Unmarshal(m[k], &s)
				return s
			}
			mg, _ := strconv.Atoi(minGroup)
			out := numbers{
				Decimal: sym["decimal"], Group: sym["group"], Percent: sym["percentSign"], Minus: sym["minusSign"],
				DecimalPattern: str(dec, "standard"), PercentPattern: str(pct, "standard"),
				CurrencyPattern: str(cur, "standard"), CurrencyAlphaPattern: str(cur, "standard-alphaNextToNumber"),
				MinGroup: max(mg, 1),
			}
			if out.CurrencyAlphaPattern == out.CurrencyPattern {
				out.CurrencyAlphaPattern = ""
			}
			if d := ns.Supplemental.NumberingSystems[system].Digits; d != "0123456789" {
				out.Digits = d
			}
			if out.DecimalPattern == "" || out.CurrencyPattern == "" || out.PercentPattern == "" {
				return out, fmt.Errorf("%s: missing patterns for %s", tag, system)
			}
			return out, nil
		}
		num, err := build(defNS)
		if err != nil {
			return nil, err
		}
		e.num = key(nums, num)
		if defNS != "latn" {
			if _, ok := n["symbols-numberSystem-latn"]; ok {
				latn, err := build("latn")
				if err != nil {
					return nil, err
				}
				e.latn = key(nums, latn)
			}
		}

		var cf struct {
			Main map[string]struct {
				Numbers struct {
					Currencies map[string]map[string]string `json:"currencies"`
				} `json:"numbers"`
			} `json:"main"`
		}
		if err := readJSON(filepath.Join(g.pkg("cldr-numbers-full"), "main", tag, "currencies.json"), &cf); err != nil {
			return nil, err
		}
		var cl []currency
		for code, m := range cf.Main[tag].Numbers.Currencies {
			if s := m["symbol"]; s != "" && s != code {
				cl = append(cl, currency{code, s})
			}
		}
		sort.Slice(cl, func(i, j int) bool { return cl[i].Code < cl[j].Code })
		e.currency = key(curs, cl)

		var gf struct {
			Main map[string]struct {
				Dates struct {
					Calendars struct {
						Gregorian struct {
							Months, Days map[string]map[string]map[string]string
							DayPeriods   map[string]map[string]map[string]string `json:"dayPeriods"`
							DateFormats  map[string]any                          `json:"dateFormats"`
							TimeFormats  map[string]any                          `json:"timeFormats"`
							DTFormats    map[string]any                          `json:"dateTimeFormats"`
						} `json:"gregorian"`
					} `json:"calendars"`
				} `json:"dates"`
			} `json:"main"`
		}
		if err := readJSON(filepath.Join(g.pkg("cldr-dates-full"), "main", tag, "ca-gregorian.json"), &gf); err != nil {
			return nil, err
		}
		gr := gf.Main[tag].Dates.Calendars.Gregorian
		var d dates
		for i := range 12 {
			k := strconv.Itoa(i + 1)
			d.Months[i] = gr.Months["format"]["wide"][k]
			d.MonthsAbbr[i] = gr.Months["format"]["abbreviated"][k]
			d.MonthsStandalone[i] = gr.Months["stand-alone"]["wide"][k]
		}
		for i, k := range []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"} {
			d.Days[i] = gr.Days["format"]["wide"][k]
			d.DaysAbbr[i] = gr.Days["format"]["abbreviated"][k]
		}
		d.AM = gr.DayPeriods["format"]["abbreviated"]["am"]
		d.PM = gr.DayPeriods["format"]["abbreviated"]["pm"]
		pattern := func(m map[string]any, k string) string {
			switch v := m[k].(type) {
			case string:
				return v
			case map[string]any: // {"_value": ...} in some versions
				s, _ := v["_value"].(string)
				return s
			}
			return ""
		}
		d.Full, d.Long = pattern(gr.DateFormats, "full"), pattern(gr.DateFormats, "long")
		d.Medium, d.Short = pattern(gr.DateFormats, "medium"), pattern(gr.DateFormats, "short")
		d.TimeShort, d.TimeMedium = pattern(gr.TimeFormats, "short"), pattern(gr.TimeFormats, "medium")
		d.DateTime = pattern(gr.DTFormats, "medium")
		if d.Months[0] == "" || d.Days[0] == "" || d.Long == "" || d.TimeShort == "" || d.DateTime == "" {
			return nil, fmt.Errorf("%s: incomplete calendar data", tag)
		}
		e.date = key(dats, d)
		entries = append(entries, e)
	}

	var digits []currency
	for code, f := range cd.Supplemental.CurrencyData.Fractions {
		if code != "DEFAULT" && f["_digits"] != "2" {
			digits = append(digits, currency{code, f["_digits"]})
		}
	}
	sort.Slice(digits, func(i, j int) bool { return digits[i].Code < digits[j].Code })

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by cldrgen from Unicode CLDR %s (cldr-json); DO NOT EDIT.\n", g.version)
	fmt.Fprintf(&b, "// CLDR data: Copyright © 1991-2025 Unicode, Inc., Unicode License v3 (https://www.unicode.org/license.txt).\n\n")
	fmt.Fprintf(&b, "package locale\n\n")
	fmt.Fprintf(&b, "// cldrVersion is the CLDR release the tables come from.\nconst cldrVersion = %q\n\n", g.version)
	for _, k := range sortedKeys(nums) {
		fmt.Fprintf(&b, "var %s = %#v\n\n", k, nums[k])
	}
	for _, k := range sortedKeys(dats) {
		fmt.Fprintf(&b, "var %s = %#v\n\n", k, dats[k])
	}
	for _, k := range sortedKeys(curs) {
		fmt.Fprintf(&b, "var %s = []currency{", k)
		for _, c := range curs[k] {
			fmt.Fprintf(&b, "{%q, %q}, ", c.Code, c.Symbol)
		}
		fmt.Fprintf(&b, "}\n\n")
	}
	fmt.Fprintf(&b, "// currencyDigits are the minor-unit digits of currencies that have other than 2.\nvar currencyDigits = map[string]int{")
	for _, c := range digits {
		fmt.Fprintf(&b, "%q: %s, ", c.Code, c.Symbol)
	}
	fmt.Fprintf(&b, "}\n\n")
	fmt.Fprintf(&b, "// table holds every locale CLDR rates modern, sorted by tag.\nvar table = []entry{\n")
	for _, e := range entries {
		latn := "nil"
		if e.latn != "" {
			latn = "&" + e.latn
		}
		fmt.Fprintf(&b, "{%q, &%s, %s, &%s, %s},\n", e.tag, e.num, latn, e.date, e.currency)
	}
	fmt.Fprintf(&b, "}\n")
	src := bytes.ReplaceAll(b.Bytes(), []byte("main.numbers"), []byte("numbers"))
	src = bytes.ReplaceAll(src, []byte("main.dates"), []byte("dates"))
	return format.Source(src)
}

// key names v, the same name for equal values.
func key[T any](m map[string]T, v T) string {
	want, _ := json.Marshal(v)
	for k, have := range m {
		if b, _ := json.Marshal(have); bytes.Equal(b, want) {
			return k
		}
	}
	prefix := map[string]string{"main.numbers": "num", "main.dates": "cal", "[]main.currency": "cur"}[fmt.Sprintf("%T", v)]
	k := prefix + strconv.Itoa(len(m))
	m[k] = v
	return k
}

func sortedKeys[T any](m map[string]T) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimLeft(ks[i], "abcdefghijklmnopqrstuvwxyz"))
		b, _ := strconv.Atoi(strings.TrimLeft(ks[j], "abcdefghijklmnopqrstuvwxyz"))
		return a < b
	})
	return ks
}
