// The wallet page's loader, written as its boot.js by `cargo xtask build-web` (build_web::boot_js
// puts the modules and the page's name in the slots). Kept in a file: the page's CSP forbids
// inline scripts.
//
// First load: the boot module (`web/boot`), which registers the wallet's persistent tools and
// draws the form the person needs first. The app (`web/`: the gate, the vault, every card) is
// fetched and started on first use, never before: an agent's first tool call, or the person's
// first act on the page (moving the pointer over it, a touch, a key, focus). The app takes the
// boot module's registrations over, so an agent sees no tool withdrawn and re-added.
// Without native WebMCP the vendored polyfill is loaded first (see webmcp.js); with no
// document.modelContext at all the app starts at once (window.tacit is the app's).
import { ensureWebmcp } from './webmcp.js';
import initBoot, { boot } from './pkg/__BOOT__.js';

const ACTS = ['pointermove', 'pointerdown', 'touchstart', 'keydown', 'focusin'];
const WAIT = 'One moment: the wallet is still loading. Press the button again when this message goes.';
let adopted = [];
let app = null;
let started = false;
let failed = null;

function fail(error) {
  failed = '__WHO__ could not start: ' + error;
  const note = document.getElementById('boot-note');
  if (note) {
    note.textContent = failed;
    note.classList.add('error');
    note.hidden = false;
  }
}

function loadApp() {
  if (!app) {
    for (const type of ACTS) {
      document.removeEventListener(type, loadApp, true);
    }
    app = import('./pkg/__MODULE__.js').then(async (module) => {
      await module.default();
      module.startWallet(adopted);
      started = true;
      const msg = document.getElementById('profile-msg');
      if (msg && msg.textContent === WAIT) {
        msg.textContent = '';
      }
      return module;
    });
    app.catch(fail);
  }
  return app;
}

// Before the app has started nothing would act on a form: say so rather than lose the press.
// (The app acts only on a person's own submit, so it cannot be replayed for them.)
function onSubmit(event) {
  if (started) {
    return;
  }
  event.preventDefault();
  const msg = document.getElementById('profile-msg');
  if (msg) {
    msg.textContent = failed || WAIT;
  }
  loadApp();
}

ensureWebmcp()
  .then(() => initBoot())
  .then(() => {
    adopted = boot((name, input) => loadApp().then((module) => module.callTool(name, input)));
    document.addEventListener('submit', onSubmit, true);
    if (!document.modelContext) {
      return loadApp();
    }
    for (const type of ACTS) {
      document.addEventListener(type, loadApp, { capture: true, passive: true });
    }
    return null;
  })
  .catch(fail);
