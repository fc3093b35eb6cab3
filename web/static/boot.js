// Loads the wallet's wasm module. Kept in a file: the page's CSP forbids inline scripts.
// Without native WebMCP the vendored polyfill is loaded first (see webmcp.js).
import { ensureWebmcp } from './webmcp.js';
import init from './pkg/tacit_web.js';

ensureWebmcp()
  .then(() => init())
  .catch((error) => {
    const note = document.getElementById('boot-note');
    if (note) {
      note.textContent = 'The wallet could not start: ' + error;
      note.classList.add('error');
    }
  });
