//! What a person does on a page, and what a test measures there: real mouse clicks and typing
//! through the `Input` domain, `<select>` choices, screenshots, heap size, console and CSP
//! violations.

use std::fs;
use std::path::PathBuf;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::browser::Page;
use crate::error::{Error, Result};

/// A window size a test looks at the page in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewport {
    pub width: u32,
    pub height: u32,
    /// Emulate a phone (touch, the page's viewport meta tag applies).
    pub mobile: bool,
}

/// A desktop browser window.
pub const DESKTOP: Viewport = Viewport {
    width: 1280,
    height: 900,
    mobile: false,
};

/// A phone held upright (390×844 CSS pixels, as an iPhone 12–15).
pub const PHONE: Viewport = Viewport {
    width: 390,
    height: 844,
    mobile: true,
};

/// How many times [`Page::click`] presses before it gives up on an element that keeps moving.
pub const CLICK_TRIES: usize = 10;

impl Page<'_> {
    /// Clicks the centre of the first element matching `selector` with real mouse events
    /// (`Input.dispatchMouseEvent` moved/pressed/released), after scrolling it into view.
    ///
    /// A page may redraw between finding the element and pressing on it (the wallet redraws in
    /// a later task than the change it draws), so the point may by then hold another node: a
    /// one-shot capture listener on `window` lets the click through only if its target is
    /// inside an element matching `selector`, swallows it otherwise, and the click is tried
    /// again on the element's new box. Fails if no click lands within [`CLICK_TRIES`] tries.
    pub fn click(&self, selector: &str) -> Result<()> {
        for attempt in 1..=CLICK_TRIES {
            // The page may draw the element a frame after the change that makes it: a missing
            // element is waited for a little before the click fails.
            let (x, y) = match self.center_of(selector) {
                Err(Error::Js(e)) if e.starts_with("no element") && attempt < CLICK_TRIES => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    continue;
                }
                other => other?,
            };
            self.eval(&format!(
                "(() => {{ const sel = {sel}; window.__clickGuard = 'armed'; \
                 const guard = (e) => {{ window.removeEventListener('click', guard, true); \
                   const t = e.target; \
                   if (t && t.closest && t.closest(sel)) {{ window.__clickGuard = 'landed'; }} \
                   else {{ window.__clickGuard = 'missed'; e.stopImmediatePropagation(); e.preventDefault(); }} }}; \
                 window.__clickGuardFn = guard; window.addEventListener('click', guard, true); return true; }})()",
                sel = Value::from(selector)
            ))?;
            for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
                let mut event = json!({ "type": kind, "x": x, "y": y });
                if kind != "mouseMoved" {
                    event["button"] = json!("left");
                    event["clickCount"] = json!(1);
                }
                self.send("Input.dispatchMouseEvent", event)?;
            }
            // A click that navigated away leaves no guard to read: it landed.
            let outcome = self
                .eval(
                    "(() => { const o = window.__clickGuard; \
                     if (window.__clickGuardFn) window.removeEventListener('click', window.__clickGuardFn, true); \
                     window.__clickGuard = undefined; window.__clickGuardFn = undefined; return o; })()",
                )
                .unwrap_or(Value::Null);
            // Only a click that went to another node is tried again ("armed", no click event at
            // all, as on a disabled button, is what a person's click would get too).
            if outcome != json!("missed") {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Err(Error::Js(format!(
            "a click on `{selector}` never landed on it in {CLICK_TRIES} tries (the page kept moving it)"
        )))
    }

    /// Presses and releases `key` on the focused element with real key events
    /// (`Input.dispatchKeyEvent`): `Enter`, `Space`, `Escape`, `Tab`, `ArrowDown`, `ArrowUp` or
    /// `Home`.
    pub fn press(&self, key: &str) -> Result<()> {
        let (code, key_value, vk, text) = match key {
            "Enter" => ("Enter", "Enter", 13, Some("\r")),
            "Space" => ("Space", " ", 32, Some(" ")),
            "Escape" => ("Escape", "Escape", 27, None),
            "Tab" => ("Tab", "Tab", 9, None),
            "ArrowDown" => ("ArrowDown", "ArrowDown", 40, None),
            "ArrowUp" => ("ArrowUp", "ArrowUp", 38, None),
            "Home" => ("Home", "Home", 36, None),
            other => return Err(Error::Js(format!("press: unknown key `{other}`"))),
        };
        let mut down = json!({
            "type": if text.is_some() { "keyDown" } else { "rawKeyDown" },
            "key": key_value,
            "code": code,
            "windowsVirtualKeyCode": vk,
            "nativeVirtualKeyCode": vk,
        });
        if let Some(text) = text {
            down["text"] = json!(text);
            down["unmodifiedText"] = json!(text);
        }
        self.send("Input.dispatchKeyEvent", down)?;
        self.send(
            "Input.dispatchKeyEvent",
            json!({ "type": "keyUp", "key": key_value, "code": code,
                    "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk }),
        )?;
        Ok(())
    }

    /// Focuses the element matching `selector` (a real focus, as tabbing to it would).
    pub fn focus_on(&self, selector: &str) -> Result<()> {
        self.focus(selector, false)
    }

    /// Focuses the element matching `selector` and types `text` at the caret with
    /// `Input.insertText` (appends to what is there; see [`Page::fill`] to replace).
    pub fn type_into(&self, selector: &str, text: &str) -> Result<()> {
        self.focus(selector, false)?;
        self.send("Input.insertText", json!({ "text": text }))?;
        Ok(())
    }

    /// Focuses the element matching `selector`, selects its content and types `text` over it.
    pub fn fill(&self, selector: &str, text: &str) -> Result<()> {
        self.focus(selector, true)?;
        self.send("Input.insertText", json!({ "text": text }))?;
        Ok(())
    }

    /// Chooses the `<option>` with `value` in the `<select>` matching `selector` as a person
    /// does with the keyboard: focuses it, then real key presses (`Home`, then `ArrowDown` to
    /// the option), so the browser fires trusted `input` and `change` events. Fails if there is
    /// no such option or the select did not end on it.
    pub fn select(&self, selector: &str, value: &str) -> Result<()> {
        let js = format!(
            "(() => {{ const el = document.querySelector({sel}); if (!el) return 'missing'; \
             const i = Array.from(el.options || []).findIndex((o) => o.value === {val}); \
             if (i < 0) \
               return 'options: ' + Array.from(el.options || []).map((o) => o.value).join(', '); \
             return i; }})()",
            sel = Value::from(selector),
            val = Value::from(value)
        );
        let index = match self.eval(&js)? {
            Value::Number(n) => n.as_u64().unwrap_or(0),
            Value::String(s) if s == "missing" => {
                return Err(Error::Js(format!("no element matches `{selector}`")));
            }
            other => {
                return Err(Error::Js(format!(
                    "`{selector}` has no option `{value}` ({other})"
                )));
            }
        };
        self.focus(selector, false)?;
        self.press("Home")?;
        for _ in 0..index {
            self.press("ArrowDown")?;
        }
        let now = self.eval(&format!(
            "document.querySelector({sel}).value",
            sel = Value::from(selector)
        ))?;
        if now != value {
            return Err(Error::Js(format!(
                "`{selector}` is at `{now}` after the key presses, not `{value}`"
            )));
        }
        Ok(())
    }

    fn focus(&self, selector: &str, select_all: bool) -> Result<()> {
        let js = format!(
            "(() => {{ const el = document.querySelector({sel}); if (!el) return false; \
             el.focus(); if ({select_all} && typeof el.select === 'function') el.select(); \
             return document.activeElement === el; }})()",
            sel = Value::from(selector)
        );
        match self.eval(&js)? {
            Value::Bool(true) => Ok(()),
            _ => Err(Error::Js(format!(
                "no focusable element matches `{selector}`"
            ))),
        }
    }

    fn center_of(&self, selector: &str) -> Result<(f64, f64)> {
        let js = format!(
            "(() => {{ const el = document.querySelector({sel}); if (!el) return null; \
             el.scrollIntoView({{block: 'center', inline: 'center'}}); \
             const r = el.getBoundingClientRect(); \
             return (r.width > 0 && r.height > 0) ? [r.left + r.width / 2, r.top + r.height / 2] : 'hidden'; }})()",
            sel = Value::from(selector)
        );
        let value = self.eval(&js)?;
        match value.as_array().map(Vec::as_slice) {
            Some([x, y]) => match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => Ok((x, y)),
                _ => Err(Error::Protocol(format!(
                    "bad box for `{selector}`: {value}"
                ))),
            },
            _ if value.is_null() => Err(Error::Js(format!("no element matches `{selector}`"))),
            _ => Err(Error::Js(format!(
                "element `{selector}` has no box (hidden?)"
            ))),
        }
    }

    /// Saves a PNG of the whole page at the desktop size ([`DESKTOP`], 1280×900) to
    /// `target/screenshots/<name>.png` and returns its path. The desktop size stays set.
    pub fn screenshot(&self, name: &str) -> Result<PathBuf> {
        self.screenshot_at(name, DESKTOP)
    }

    /// Emulates `viewport` (`Emulation.setDeviceMetricsOverride`; a phone is emulated as a
    /// mobile device, so the page's `<meta name="viewport">` applies) and waits for the page to
    /// lay itself out at that size.
    pub fn set_viewport(&self, viewport: Viewport) -> Result<()> {
        self.send(
            "Emulation.setDeviceMetricsOverride",
            json!({
                "width": viewport.width,
                "height": viewport.height,
                "deviceScaleFactor": 1,
                "mobile": viewport.mobile,
            }),
        )?;
        // Two animation frames: the resize and the layout after it have happened. A tab in the
        // background gets no animation frames, so a timer ends the wait there (its layout is
        // brought up to date by the screenshot itself).
        self.eval(
            "new Promise((done) => { \
               requestAnimationFrame(() => requestAnimationFrame(() => done(true))); \
               setTimeout(() => done(false), 250); })",
        )?;
        Ok(())
    }

    /// Saves a PNG of the whole page (not just the visible part) at `viewport`'s width to
    /// `target/screenshots/<name>.png` and returns its path. The viewport stays set and the tab
    /// stays in front.
    pub fn screenshot_at(&self, name: &str, viewport: Viewport) -> Result<PathBuf> {
        // A tab in the background makes no frames, so `Page.captureScreenshot` never answers
        // there (CI waited 30 s on a site tab behind the wallet). The person looks at this tab.
        self.send("Page.bringToFront", json!({}))?;
        self.set_viewport(viewport)?;
        let metrics = self.send("Page.getLayoutMetrics", json!({}))?;
        let height = metrics
            .pointer("/cssContentSize/height")
            .and_then(Value::as_f64)
            .unwrap_or(f64::from(viewport.height))
            .clamp(300.0, 8000.0);
        let shot = self.send(
            "Page.captureScreenshot",
            json!({
                "format": "png",
                "captureBeyondViewport": true,
                "clip": { "x": 0, "y": 0, "width": viewport.width, "height": height, "scale": 1 },
            }),
        )?;
        let data = shot
            .get("data")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::Protocol(format!("no screenshot data: {shot}")))?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| Error::Protocol(format!("screenshot is not base64: {e}")))?;
        let dir = crate::screenshots_dir();
        fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{name}.png"));
        fs::write(&path, png)?;
        Ok(path)
    }

    /// From the next navigation on, records every CSP violation the page reports (installed
    /// through DevTools before any page script runs). Read them with [`Page::csp_violations`].
    pub fn watch_csp(&self) -> Result<()> {
        let source = "window.__tacitCsp = []; document.addEventListener('securitypolicyviolation', \
                      (e) => window.__tacitCsp.push(e.violatedDirective + ' ' + e.blockedURI + \
                      (e.sourceFile ? ' at ' + e.sourceFile + ':' + e.lineNumber : '')));";
        self.send(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": source }),
        )?;
        Ok(())
    }

    /// CSP violations recorded since [`Page::watch_csp`] (as `directive blocked-uri [at file:line]`).
    pub fn csp_violations(&self) -> Result<Vec<String>> {
        let value = self.eval("window.__tacitCsp || null")?;
        match value {
            Value::Array(items) => Ok(items
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_owned())
                .collect()),
            _ => Err(Error::Js(
                "CSP violations are not being recorded: call watch_csp() before navigating".into(),
            )),
        }
    }

    /// Bytes of JS heap in use (`Runtime.getHeapUsage().usedSize`).
    pub fn js_heap_used(&self) -> Result<u64> {
        let usage = self.send("Runtime.getHeapUsage", json!({}))?;
        usage
            .get("usedSize")
            .and_then(Value::as_f64)
            .map(|used| used as u64)
            .ok_or_else(|| Error::Protocol(format!("Runtime.getHeapUsage: {usage}")))
    }

    /// Forces a garbage collection (`HeapProfiler.collectGarbage`), e.g. before measuring.
    pub fn collect_garbage(&self) -> Result<()> {
        self.send("HeapProfiler.collectGarbage", json!({}))?;
        Ok(())
    }

    /// Every string in this page's whole JS heap: the strings table of a heap snapshot
    /// (`HeapProfiler.takeHeapSnapshot`), which holds each string any object of the page holds
    /// (property names and values, source text, closures' captured strings). A wasm module's
    /// linear memory is one `ArrayBuffer` whose bytes are not strings; read it from the
    /// module's `memory.buffer`.
    pub fn heap_strings(&self) -> Result<Vec<String>> {
        self.send("HeapProfiler.enable", json!({}))?;
        let _ = self.take_events("HeapProfiler.addHeapSnapshotChunk")?;
        self.send(
            "HeapProfiler.takeHeapSnapshot",
            json!({ "reportProgress": false }),
        )?;
        let chunks = self.take_events("HeapProfiler.addHeapSnapshotChunk")?;
        self.send("HeapProfiler.disable", json!({}))?;
        let mut text = String::new();
        for chunk in chunks {
            if let Some(part) = chunk.params.get("chunk").and_then(Value::as_str) {
                text.push_str(part);
            }
        }
        let snapshot: Value = serde_json::from_str(&text).map_err(|e| {
            Error::Protocol(format!(
                "the heap snapshot ({} bytes) is not whole: {e}",
                text.len()
            ))
        })?;
        let strings = snapshot
            .get("strings")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::Protocol("the heap snapshot has no strings table".into()))?;
        Ok(strings
            .iter()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect())
    }

    /// Console messages and uncaught exceptions since the last call, as `level: text` lines.
    pub fn console(&self) -> Result<Vec<String>> {
        let mut lines = Vec::new();
        for event in self.take_events("Runtime.")? {
            match event.method.as_str() {
                "Runtime.consoleAPICalled" => {
                    let level = event
                        .params
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("log");
                    let args: Vec<String> = event
                        .params
                        .get("args")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .map(remote_object_text)
                        .collect();
                    lines.push(format!("{level}: {}", args.join(" ")));
                }
                "Runtime.exceptionThrown" => {
                    let details = &event.params["exceptionDetails"];
                    let text = details
                        .pointer("/exception/description")
                        .and_then(Value::as_str)
                        .or_else(|| details.get("text").and_then(Value::as_str))
                        .unwrap_or("exception");
                    lines.push(format!("uncaught: {text}"));
                }
                _ => {}
            }
        }
        Ok(lines)
    }
}

fn remote_object_text(object: &Value) -> String {
    match object.get("value") {
        Some(Value::String(s)) => s.clone(),
        Some(value) => value.to_string(),
        None => object
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned(),
    }
}
