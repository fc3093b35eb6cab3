// Tacit's WebMCP loader, shared by the wallet and the sites (`cargo xtask build-web` copies it
// next to every page's boot.js). Kept in a file: the pages' CSP forbids inline scripts.
//
// With the browser's own `document.modelContext` nothing is loaded. Without it (and in a secure
// context, the only place the polyfill installs itself) the vendored, pinned
// `@mcp-b/webmcp-polyfill` is added as a classic script from this origin and awaited, before the
// page's wasm starts. `globalThis.__tacitWebmcp` then records what happened: 'native',
// 'polyfilled' (set only after the script loaded and `document.modelContext` appeared),
// 'polyfill-failed' or 'insecure-context'. It is read-only once set.
//
// What a page script could fake with it: a label. The wasm trusts 'native' only if
// `document.modelContext`'s getter is the browser's own, and 'polyfilled' only without one; the
// label decides what the pill says and where tools are registered, never what a tool answers.

const POLYFILL = new URL('./vendor/webmcp-polyfill.js', import.meta.url).href;

function loadClassic(src) {
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = src;
    script.async = false;
    script.addEventListener('load', () => resolve(), { once: true });
    script.addEventListener('error', () => reject(new Error('could not load ' + src)), {
      once: true,
    });
    document.head.append(script);
  });
}

async function decide() {
  if (document.modelContext) {
    return 'native';
  }
  if (!window.isSecureContext) {
    return 'insecure-context';
  }
  try {
    await loadClassic(POLYFILL);
  } catch (error) {
    console.warn('[tacit] the WebMCP polyfill did not load:', error);
    return 'polyfill-failed';
  }
  return document.modelContext ? 'polyfilled' : 'polyfill-failed';
}

// Resolves to the outcome once `document.modelContext` is what the page will use.
export async function ensureWebmcp() {
  const outcome = await decide();
  try {
    Object.defineProperty(globalThis, '__tacitWebmcp', {
      value: outcome,
      writable: false,
      configurable: false,
      enumerable: false,
    });
  } catch (error) {
    // Already defined by someone else: the wasm's own checks decide.
    console.warn('[tacit] __tacitWebmcp was already defined:', error);
  }
  return outcome;
}
