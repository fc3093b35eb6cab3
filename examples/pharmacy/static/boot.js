// Loads the site's wasm module. Kept in a file: the page's CSP forbids inline scripts.
// Without native WebMCP the vendored polyfill is loaded first (webmcp.js, the wallet's loader,
// copied here by `cargo xtask build-web`).
import { ensureWebmcp } from './webmcp.js';
import init from './pkg/tacit_pharmacy.js';

ensureWebmcp()
  .then(() => init())
  .catch((error) => {
    const note = document.getElementById('boot-note');
    if (note) {
      note.textContent = 'This page could not start: ' + error;
      note.classList.add('error');
    }
  });
