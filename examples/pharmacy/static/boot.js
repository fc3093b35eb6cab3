// Loads the site's wasm module. Kept in a file: the page's CSP forbids inline scripts.
import init from './pkg/tacit_pharmacy.js';

init().catch((error) => {
  const note = document.getElementById('boot-note');
  if (note) {
    note.textContent = 'This page could not start: ' + error;
    note.classList.add('error');
  }
});
