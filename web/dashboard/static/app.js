// Folio dashboard script: small, hand-written, no dependencies. Every page
// works without it; it adds confirmations, copy buttons, the template
// editor's checks and live preview, and auto-refresh of the jobs list.
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

  // Copy buttons: data-copy names the input holding the text.
  $$("[data-copy]").forEach((b) => b.addEventListener("click", async () => {
    const src = $(b.dataset.copy);
    if (!src) return;
    try {
      await navigator.clipboard.writeText(src.value);
    } catch (e) {
      src.select();
      document.execCommand("copy");
    }
    const was = b.textContent;
    b.textContent = "Copied";
    setTimeout(() => { b.textContent = was; }, 1500);
  }));

  $$("[data-back]").forEach((a) => a.addEventListener("click", (ev) => {
    if (history.length > 1) { ev.preventDefault(); history.back(); }
  }));

  // "Format" buttons pretty-print a JSON textarea.
  $$("[data-format]").forEach((b) => b.addEventListener("click", () => {
    const ta = $(b.dataset.format);
    try {
      ta.value = JSON.stringify(JSON.parse(ta.value), null, 2);
      ta.dispatchEvent(new Event("input"));
    } catch (e) { /* the status line already shows the syntax error */ }
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

  // The template editor: validation as you type, live draft saving and
  // the preview pane.
  function editor() {
    const form = $("#editor-form");
    const sample = $("#sample-form");
    if (!form || !sample) return;
    const id = form.dataset.id;
    const editable = form.dataset.editable === "true";
    const schema = $("#schema"), variables = $("#variables"), constants = $("#constants"), calculated = $("#calculated");
    const frame = $("#preview-frame"), status = $("#preview-status"), open = $("#preview-open");
    const live = $("#live");
    let seq = 0, lastURL = null, saved = true;

    // Sample values are kept per template in this browser.
    const store = "folio.sample." + id;
    const inputs = $$("[name^='var.'], #format", sample);
    if (sample.dataset.example) {
      saveSample();
    } else {
      try {
        const vals = JSON.parse(localStorage.getItem(store) || "{}");
        inputs.forEach((i) => { if (i.name in vals) i.value = vals[i.name]; });
      } catch (e) { /* ignore a damaged entry */ }
    }
    function saveSample() {
      const vals = {};
      inputs.forEach((i) => { vals[i.name] = i.value; });
      try { localStorage.setItem(store, JSON.stringify(vals)); } catch (e) { /* storage full or off */ }
    }

    function parse(ta, name, fallback) {
      if (!ta || ta.value.trim() === "") return { ok: true, value: fallback };
      try {
        return { ok: true, value: JSON.parse(ta.value) };
      } catch (e) {
        return { ok: false, error: name + " is not valid JSON: " + e.message };
      }
    }

    function show(box, result) {
      box.replaceChildren();
      if (result.syntax) {
        box.append(el("div", "bad", result.syntax));
        return;
      }
      if (result.request) {
        box.append(el("div", "bad", result.request));
        return;
      }
      const v = result.validation;
      box.append(el("div", v.valid ? "ok" : "bad", v.valid ? "✓ Valid" : "✗ " + v.errors.length + " problem" + (v.errors.length === 1 ? "" : "s")));
      const list = (items, cls) => {
        if (!items || !items.length) return;
        const ul = el("ul", cls);
        items.forEach((i) => {
          const li = el("li");
          li.append(el("code", "", i.path || i.variable || ""), document.createTextNode(" " + i.message));
          ul.append(li);
        });
        box.append(ul);
      };
      list(v.errors, "bad");
      list(v.warnings, "warning");
    }

    async function validate(url, body, box) {
      try {
        const res = await post(url, body);
        const j = await res.json();
        if (!res.ok) {
          show(box, { request: j.text || j.message });
          return false;
        }
        show(box, { validation: j });
        return j.valid;
      } catch (e) {
        show(box, { request: "Could not reach the server: " + e.message });
        return false;
      }
    }

    const check = debounce(async () => {
      const mine = ++seq;
      const s = parse(schema, "Schema"), v = parse(variables, "Variables", []), c = parse(constants, "Constants", {}), k = parse(calculated, "Calculated variables", []);
      const sBox = $("#schema-status"), vBox = $("#variables-status");
      if (!s.ok) show(sBox, { syntax: s.error });
      if (!v.ok || !c.ok || !k.ok) show(vBox, { syntax: (v.error || c.error || k.error) });
      if (!s.ok || !v.ok || !c.ok || !k.ok) return;
      const [sOK, vOK] = await Promise.all([
        validate("/app/templates/validate-schema", { templateType: form.dataset.type, schema: s.value }, sBox),
        validate("/app/templates/validate-variables", { variables: v.value, constants: c.value, calculatedVariables: k.value }, vBox),
      ]);
      if (mine !== seq || !sOK || !vOK || !editable || !live || !live.checked || saved) return;
      setStatus("Saving the draft…");
      try {
        const res = await post("/app/templates/" + encodeURIComponent(id) + "/draft",
          { schema: s.value, variables: v.value, constants: c.value, calculatedVariables: k.value });
        const j = await res.json();
        if (!res.ok) { setStatus(j.text || j.message, true); return; }
        saved = true;
        const badge = $("#draft-badge");
        if (badge) badge.hidden = false;
      } catch (e) {
        setStatus("Could not save the draft: " + e.message, true);
        return;
      }
      if (mine === seq) preview();
    }, 600);

    [schema, variables, constants, calculated].forEach((ta) => ta && ta.addEventListener("input", () => { saved = false; check(); }));
    form.addEventListener("submit", () => { saved = true; });

    function setStatus(text, bad) {
      status.replaceChildren(el("span", bad ? "bad" : "muted", text));
    }

    async function preview() {
      saveSample();
      setStatus("Rendering…");
      const fd = new FormData(sample);
      try {
        const res = await post(sample.dataset.preview, fd);
        const type = res.headers.get("Content-Type") || "";
        if (!res.ok || type.startsWith("application/json")) {
          const j = await res.json();
          status.replaceChildren(el("div", "bad", j.text || j.message));
          const errs = j.relatedInfo && j.relatedInfo.errors;
          if (Array.isArray(errs) && errs.length) {
            const ul = el("ul", "bad");
            errs.forEach((e) => ul.append(el("li", "", (e.variable || e.path || "") + ": " + e.message)));
            status.append(ul);
          }
          return;
        }
        const blob = await res.blob();
        if (lastURL) URL.revokeObjectURL(lastURL);
        lastURL = URL.createObjectURL(blob);
        const pages = res.headers.get("X-Folio-Pages");
        const kb = (blob.size / 1024).toFixed(1);
        const when = new Date().toLocaleTimeString();
        if (type.startsWith("application/pdf")) {
          frame.src = lastURL + "#view=FitH&navpanes=0";
          frame.hidden = false;
          status.replaceChildren(el("span", "ok", "Preview: " + pages + " page" + (pages === "1" ? "" : "s") + ", " + kb + " KB, " + when));
        } else {
          frame.hidden = true;
          status.replaceChildren(el("span", "ok", "XLSX preview ready (" + kb + " KB, " + when + "): open it below."));
        }
        status.dataset.rendered = String(Date.now());
        open.href = lastURL;
        open.download = type.startsWith("application/pdf") ? "" : "preview.xlsx";
        open.hidden = false;
      } catch (e) {
        setStatus("Could not render: " + e.message, true);
      }
    }

    $("#preview-button").addEventListener("click", preview);
    inputs.forEach((i) => i.addEventListener("change", () => { saveSample(); if (live && live.checked) preview(); }));
    check();
    if (live && live.checked) preview();
  }
})();
