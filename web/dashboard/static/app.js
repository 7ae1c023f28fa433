// Folio dashboard script: small, hand-written, no dependencies. Every page
// works without it; it adds confirmations, copy buttons, the template
// editor (the vendored CodeMirror, checks marked at their line, a live
// preview of the unsaved text), and auto-refresh of the jobs list.
"use strict";

(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content || "";
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  // post sends a same-origin request carrying the CSRF token in a header.
  function post(url, body) {
    const opts = { method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": csrf } };
    if (body instanceof FormData) {
      opts.body = body;
    } else {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    return fetch(url, opts);
  }

  function debounce(fn, ms) {
    let t;
    return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Forms that delete or revoke ask first.
  document.addEventListener("submit", (ev) => {
    const f = ev.target.closest("form[data-confirm]");
    if (f && !window.confirm(f.dataset.confirm)) ev.preventDefault();
  });

  // Copy buttons: data-copy names the input (or element) holding the text.
  $$("[data-copy]").forEach((b) => b.addEventListener("click", async () => {
    const src = $(b.dataset.copy);
    if (!src) return;
    try {
      await navigator.clipboard.writeText("value" in src ? src.value : src.textContent);
    } catch (e) {
      if (src.select) {
        src.select();
      } else {
        const r = document.createRange();
        r.selectNodeContents(src);
        getSelection().removeAllRanges();
        getSelection().addRange(r);
      }
      document.execCommand("copy");
    }
    const was = b.textContent;
    b.textContent = "Copied";
    setTimeout(() => { b.textContent = was; }, 1500);
  }));

  $$("[data-back]").forEach((a) => a.addEventListener("click", (ev) => {
    if (history.length > 1) { ev.preventDefault(); history.back(); }
  }));

  // Job detail pages reload while the job runs.
  const job = $("[data-reload]");
  if (job) setTimeout(() => location.reload(), Number(job.dataset.reload) * 1000);

  // Jobs list: refresh the table every 5 seconds while the box is ticked.
  const jobs = $("#jobs[data-refresh-url]");
  const auto = $("#autorefresh");
  if (jobs && auto) {
    const key = "folio.jobs.autorefresh";
    if (localStorage.getItem(key) === "off") auto.checked = false;
    auto.addEventListener("change", () => localStorage.setItem(key, auto.checked ? "on" : "off"));
    const url = jobs.dataset.refreshUrl + (jobs.dataset.refreshUrl.includes("?") ? "&" : "?") + "fragment=1";
    const timer = setInterval(async () => {
      if (!auto.checked || document.hidden) return;
      try {
        // Not following redirects: after the session ends the answer is a
        // redirect to the login page, which must not land inside the table.
        const res = await fetch(url, { credentials: "same-origin", redirect: "manual" });
        if (res.type === "opaqueredirect" || (res.ok && res.headers.get("X-Folio-Fragment") !== "jobtable")) {
          clearInterval(timer);
          location.reload(); // the server sends the login page, which comes back here
          return;
        }
        if (res.ok) jobs.innerHTML = await res.text();
      } catch (e) { /* offline for a moment; try again next time */ }
    }, 5000);
  }

  editor();

  // positions parses JSON text and returns where each value is: a Map from
  // its path, written as the server's messages write it
  // (root.sections[0].props), to the offsets of the value (or of its key).
  // Text that is not JSON throws {pos, message}.
  function positions(text, root) {
    const out = new Map();
    let i = 0;
    const fail = (msg) => {
      const before = text.slice(0, i).split("\n");
      throw { pos: i, message: msg + " at line " + before.length + ", column " + (before[before.length - 1].length + 1) };
    };
    const ws = () => { while (i < text.length && " \t\r\n".includes(text[i])) i++; };
    const str = () => {
      const start = i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === "\\") i++;
        else if (text[i] < " ") fail("a control character in a string");
        i++;
      }
      if (i >= text.length) fail("an unterminated string");
      i++;
      return JSON.parse(text.slice(start, i));
    };
    const value = (path, from) => {
      ws();
      const start = from === undefined ? i : from;
      const c = text[i];
      if (c === "{") {
        i++; ws();
        if (text[i] === "}") { i++; } else {
          for (;;) {
            ws();
            if (text[i] !== '"') fail("expected a quoted name");
            const keyAt = i;
            const key = str();
            ws();
            if (text[i] !== ":") fail("expected ':' after a name");
            i++;
            value(path + "." + key, keyAt);
            ws();
            if (text[i] === ",") { i++; continue; }
            if (text[i] === "}") { i++; break; }
            fail("expected ',' or '}'");
          }
        }
      } else if (c === "[") {
        i++; ws();
        if (text[i] === "]") { i++; } else {
          for (let n = 0; ; n++) {
            value(path + "[" + n + "]");
            ws();
            if (text[i] === ",") { i++; continue; }
            if (text[i] === "]") { i++; break; }
            fail("expected ',' or ']'");
          }
        }
      } else if (c === '"') {
        str();
      } else {
        const m = /^(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
        if (!m) fail(i >= text.length ? "unexpected end of the text" : "unexpected " + JSON.stringify(c));
        i += m[0].length;
      }
      out.set(path, { from: start, to: i });
    };
    value(root);
    ws();
    if (i < text.length) fail("unexpected text after the JSON value");
    return out;
  }

  // locate finds where a message's path is in a field: the path itself, or
  // the nearest enclosing value that exists (a missing prop marks its object).
  function locate(map, path) {
    for (let p = path || ""; p; ) {
      if (map.has(p)) return map.get(p);
      const up = p.replace(/(\.[^.[\]]+|\[\d+\])$/, "");
      if (up === p) return null;
      p = up;
    }
    return null;
  }

  // The template editor: a code editor per JSON field (when CodeMirror
  // loaded), checks as you type marked at their line, sample values, and a
  // live preview of the unsaved text. Nothing is stored until Save.
  function editor() {
    const form = $("#editor-form");
    if (!form) return;
    const editable = form.dataset.editable === "true";
    const frame = $("#preview-frame"), table = $("#preview-table"), status = $("#preview-status"), open = $("#preview-open");
    const live = $("#live"), format = $("#format"), fieldsBox = $("#sample-fields");
    if ($("#live-label")) $("#live-label").hidden = false;
    const fields = { schema: "Schema", variables: "Variables", constants: "Constants", calculatedVariables: "Calculated variables" };
    const fallback = { variables: [], constants: {}, calculatedVariables: [] };
    const codes = {};
    const lint = {}; // name -> {text, list} of the last check, and a waiting linter
    let seq = 0, previewSeq = 0, lastURL = null, lastBody = "", wanted = false;

    // Ctrl+S in the code editor saves, as the Save button does.
    const save = () => { if (editable && $("#save")) form.requestSubmit($("#save")); };
    $$("textarea[data-code]", form).forEach((ta) => {
      const name = ta.dataset.code;
      const c = { ta, cm: null };
      if (window.CodeMirror) {
        c.cm = window.CodeMirror.fromTextArea(ta, {
          mode: { name: "javascript", json: true }, lineNumbers: true, matchBrackets: true, autoCloseBrackets: true,
          readOnly: ta.readOnly, tabSize: 2, indentUnit: 2, viewportMargin: 50,
          extraKeys: { "Ctrl-S": save, "Cmd-S": save }, screenReaderLabel: fields[name],
          gutters: ["CodeMirror-lint-markers"],
          lint: {
            async: true, lintOnChange: true, delay: 400,
            getAnnotations: (text, done) => {
              const last = lint[name];
              if (last && last.text === text) done(last.list);
              else lint[name] = { text: null, list: [], waiting: done };
            },
          },
        });
        c.cm.getWrapperElement().classList.add("cm-" + name);
        c.cm.getWrapperElement().dataset.field = name;
        c.cm.on("change", () => { c.cm.save(); edited(); });
      } else {
        ta.addEventListener("input", edited);
      }
      c.get = () => (c.cm ? c.cm.getValue() : ta.value);
      c.set = (v) => { if (c.cm) c.cm.setValue(v); else { ta.value = v; edited(); } };
      c.at = (offset) => (c.cm ? c.cm.posFromIndex(offset) : null);
      codes[name] = c;
    });
    // CodeMirror measures itself: one inside a closed <details> needs a
    // refresh once it is shown.
    $$("details[data-refresh]", form).forEach((d) => d.addEventListener("toggle", () => {
      $$(".CodeMirror", d).forEach((w) => w.CodeMirror && w.CodeMirror.refresh());
    }));
    $$("[data-format]").forEach((b) => b.addEventListener("click", () => {
      const c = codes[$(b.dataset.format).dataset.code];
      try { c.set(JSON.stringify(JSON.parse(c.get()), null, 2)); } catch (e) { /* the status line shows the error */ }
    }));

    // The asset picker inserts asset:<name> at the code field's cursor
    // (over its selection).
    $$("[data-insert]").forEach((b) => b.addEventListener("click", () => {
      const c = codes[$(b.dataset.target).dataset.code], text = b.dataset.insert;
      if (c.cm) { c.cm.replaceSelection(text); c.cm.focus(); return; }
      c.ta.setRangeText(text, c.ta.selectionStart, c.ta.selectionEnd, "end");
      c.ta.focus();
      edited();
    }));

    function edited() {
      if (!editable) { check(); return; }
      $("#unsaved-badge").hidden = false;
      if ($("#publish-unsaved")) $("#publish-unsaved").hidden = false;
      check();
    }
    form.addEventListener("submit", () => { $("#unsaved-badge").hidden = true; });
    fieldsBox.addEventListener("input", edited);
    fieldsBox.addEventListener("change", edited);
    format.addEventListener("change", () => preview());
    if (live) live.addEventListener("change", () => { if (live.checked) preview(); });

    function show(box, head, ok, items) {
      box.replaceChildren(el("div", ok ? "ok" : "bad", head));
      const list = (xs, cls) => {
        if (!xs || !xs.length) return;
        const ul = el("ul", cls);
        xs.forEach((x) => {
          const li = el("li");
          li.append(el("code", "", x.path || x.variable || ""), document.createTextNode(" " + x.message));
          ul.append(li);
        });
        box.append(ul);
      };
      list(items.errors, "bad");
      list(items.warnings, "warning");
    }

    async function validate(url, body) {
      try {
        const res = await post(url, body);
        const j = await res.json();
        return res.ok ? j : { request: j.text || j.message };
      } catch (e) {
        return { request: "Could not reach the server: " + e.message };
      }
    }

    // mark hands each field's problems to its linter: gutter markers and
    // underlines at the line of each path.
    function mark(texts, list) {
      Object.keys(codes).forEach((name) => {
        const prev = lint[name];
        lint[name] = { text: texts[name], list: list[name] || [] };
        if (prev && prev.waiting && prev.text === null) {
          if (codes[name].cm && codes[name].cm.getValue() === texts[name]) prev.waiting(lint[name].list);
          else lint[name].waiting = prev.waiting;
        }
        if (codes[name].cm && codes[name].cm.performLint) codes[name].cm.performLint();
      });
    }

    const check = debounce(async () => {
      const mine = ++seq;
      const texts = {}, values = {}, maps = {}, notes = {};
      const syntax = [];
      Object.keys(fields).forEach((name) => {
        notes[name] = [];
        if (!codes[name]) return;
        const text = (texts[name] = codes[name].get());
        if (text.trim() === "" && name !== "schema") { values[name] = fallback[name]; maps[name] = new Map(); return; }
        try {
          maps[name] = positions(text, name);
          values[name] = JSON.parse(text);
        } catch (e) {
          const at = codes[name].at(e.pos || 0);
          const msg = fields[name] + " is not valid JSON: " + (e.message || e);
          syntax.push({ name, message: msg });
          if (at) notes[name].push({ from: at, to: codes[name].at((e.pos || 0) + 1), message: msg, severity: "error" });
        }
      });
      const sBox = $("#schema-status"), vBox = $("#variables-status");
      if (syntax.length) {
        const s = syntax.find((x) => x.name === "schema"), v = syntax.find((x) => x.name !== "schema");
        if (s) sBox.replaceChildren(el("div", "bad", s.message));
        if (v) vBox.replaceChildren(el("div", "bad", v.message));
        mark(texts, notes);
        return;
      }
      // The schema is checked with the declarations, as Save checks it: a
      // name an expression reads that nothing declares is warned about.
      const decl = { variables: values.variables, constants: values.constants, calculatedVariables: values.calculatedVariables };
      const schemaOnly = { templateType: form.dataset.type, schema: values.schema };
      let [sv, vv] = await Promise.all([
        validate("/app/templates/validate-schema", Object.assign({}, schemaOnly, decl)),
        validate("/app/templates/validate-variables", decl),
      ]);
      // Declarations the server cannot read (a name that is a number) are
      // the variables box's problem: the schema is checked alone.
      if (sv.request && vv.request && mine === seq) sv = await validate("/app/templates/validate-schema", schemaOnly);
      if (mine !== seq) return;
      // The declarations' own problems are listed (and marked) once, by
      // validate-variables.
      if (!sv.request) {
        const own = (x) => !x.path || x.path === "schema" || x.path.startsWith("schema.") || x.path.startsWith("schema[");
        sv.errors = (sv.errors || []).filter(own);
        sv.warnings = (sv.warnings || []).filter(own);
        sv.valid = sv.errors.length === 0;
      }
      const results = [[sBox, sv], [vBox, vv]];
      results.forEach(([box, v]) => {
        if (v.request) { box.replaceChildren(el("div", "bad", v.request)); return; }
        show(box, v.valid ? "✓ Valid" : "✗ " + v.errors.length + " problem" + (v.errors.length === 1 ? "" : "s"), v.valid, v);
        [["errors", "error"], ["warnings", "warning"]].forEach(([key, severity]) => (v[key] || []).forEach((issue) => {
          const name = Object.keys(fields).find((f) => issue.path === f || (issue.path || "").startsWith(f + ".") || (issue.path || "").startsWith(f + "["));
          if (!name || !codes[name]) return;
          const where = locate(maps[name], issue.path) || { from: 0, to: 1 };
          // The line of the value's start: a key, or an array element.
          const from = codes[name].at(where.from);
          const to = codes[name].at(Math.min(where.to, where.from + 200));
          notes[name].push({ from, to, message: issue.path + ": " + issue.message, severity });
        }));
      });
      mark(texts, notes);
      syncSamples(values.variables);
      if (sv.valid && vv.valid && (wanted || !live || live.checked)) {
        wanted = false;
        preview(values);
      }
    }, 450);

    // The sample form follows the variables as typed: a field per variable,
    // values kept by name. A value outlives its field: a variable that
    // disappears while its name or type is being typed gets it back when it
    // returns.
    const keptSamples = {};
    function syncSamples(vars) {
      if (!Array.isArray(vars)) return;
      const want = vars.filter((v) => v && typeof v.name === "string" && v.name);
      const have = $$("[data-var]", fieldsBox).map((l) => l.dataset.var);
      const key = (v) => [v.name, v.type, !!v.required, v.description || ""].join("|");
      const sig = want.map(key).join("\n");
      if (fieldsBox.dataset.sig === undefined) fieldsBox.dataset.sig = sig;
      if (sig === fieldsBox.dataset.sig && want.length === have.length) return;
      fieldsBox.dataset.sig = sig;
      const old = keptSamples;
      $$("[name^='var.']", fieldsBox).forEach((i) => { old[i.name.slice(4)] = i.value; });
      const nodes = want.map((v) => {
        const label = el("label");
        label.dataset.var = v.name;
        label.append(document.createTextNode(v.name + " "),
          el("span", "muted small", (v.type || "string") + (v.required ? ", required" : "") + (v.description ? " — " + v.description : "")));
        const def = v.defaultValue === undefined || v.defaultValue === null ? "" : (typeof v.defaultValue === "string" ? v.defaultValue : JSON.stringify(v.defaultValue));
        let input;
        if (v.type === "object" || v.type === "array") {
          input = el("textarea", "code");
          input.rows = 4;
          input.spellcheck = false;
        } else if (v.type === "boolean") {
          input = el("select");
          input.append(el("option", "", "(default" + (def ? ": " + def : "") + ")"), el("option", "", "true"), el("option", "", "false"));
          input.options[0].value = "";
        } else {
          input = el("input");
          if (v.type === "number" || v.type === "integer") input.inputMode = "decimal";
        }
        input.name = "var." + v.name;
        if (input.tagName !== "SELECT") input.placeholder = def || (v.type === "date" ? "YYYY-MM-DD" : "");
        input.value = old[v.name] || "";
        label.append(input);
        return label;
      });
      if (!nodes.length) nodes.push(el("p", "muted small", "This template declares no variables."));
      fieldsBox.replaceChildren(...nodes);
    }

    function setStatus(text, cls) {
      status.replaceChildren(el("span", cls || "muted", text));
    }

    // preview renders the editor's text with the sample values, unsaved.
    async function preview(values) {
      if (!values) { wanted = true; check(); return; }
      const fmt = format.value;
      const body = { schema: values.schema, variables: values.variables, constants: values.constants,
        calculatedVariables: values.calculatedVariables, fields: {}, format: fmt, view: fmt === "xlsx" ? "table" : "" };
      $$("[name^='var.']", fieldsBox).forEach((i) => { body.fields[i.name.slice(4)] = i.value; });
      const text = JSON.stringify(body);
      if (text === lastBody && status.dataset.rendered) return; // nothing changed since the last render
      lastBody = text;
      const mine = ++previewSeq;
      setStatus("Rendering…");
      try {
        const res = await post(form.dataset.preview, body);
        if (mine !== previewSeq) return;
        const type = res.headers.get("Content-Type") || "";
        if (!res.ok || type.startsWith("application/json")) {
          const j = await res.json();
          lastBody = "";
          status.replaceChildren(el("div", "bad", j.text || j.message));
          const errs = j.relatedInfo && j.relatedInfo.errors;
          if (Array.isArray(errs) && errs.length) {
            const ul = el("ul", "bad");
            errs.forEach((e) => ul.append(el("li", "", (e.variable || e.path || "") + ": " + e.message)));
            status.append(ul);
          }
          return;
        }
        const when = new Date().toLocaleTimeString();
        const kb = ((Number(res.headers.get("X-Folio-Bytes")) || 0) / 1024).toFixed(1);
        if (res.headers.get("X-Folio-Fragment") === "xlsx-table") {
          table.innerHTML = await res.text(); // the server's escaped HTML table
          table.hidden = false;
          frame.hidden = true;
          open.hidden = true;
          const sheets = res.headers.get("X-Folio-Sheets");
          setStatus("Preview: XLSX, " + sheets + " sheet" + (sheets === "1" ? "" : "s") + ", " + kb + " KB, " + when + " (first sheet below; Generate for the file)", "ok");
        } else {
          const blob = await res.blob();
          if (lastURL) URL.revokeObjectURL(lastURL);
          lastURL = URL.createObjectURL(blob);
          const pages = res.headers.get("X-Folio-Pages");
          frame.src = lastURL + "#view=FitH&navpanes=0";
          frame.hidden = false;
          table.hidden = true;
          open.href = lastURL;
          open.hidden = false;
          setStatus("Preview: " + pages + " page" + (pages === "1" ? "" : "s") + ", " + kb + " KB, " + when, "ok");
        }
        status.dataset.rendered = String(Date.now());
      } catch (e) {
        lastBody = "";
        setStatus("Could not render: " + e.message, "bad");
      }
    }

    // The Preview button renders in the pane; without script it posts the
    // form and opens the file in a new tab.
    $("#preview-button").addEventListener("click", (ev) => {
      ev.preventDefault();
      lastBody = "";
      wanted = true;
      check();
    });
    check();
  }
})();
