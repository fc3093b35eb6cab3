// Loads a page's wasm module: the one template for every page (wallet and sites), written as
// each page's boot.js by `cargo xtask build-web` (build_web::boot_js), which puts the page's
// wasm-bindgen module and its name in the two slots. Kept in a file: the pages' CSP forbids
// inline scripts.
// Without native WebMCP the vendored polyfill is loaded first (see webmcp.js).
import { ensureWebmcp } from './webmcp.js';
import init from './pkg/__MODULE__.js';

ensureWebmcp()
  .then(() => init())
  .catch((error) => {
    const note = document.getElementById('boot-note');
    if (note) {
      note.textContent = '__WHO__ could not start: ' + error;
      note.classList.add('error');
    }
  });
