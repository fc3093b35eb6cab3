// The passphrase strength estimate (web/strength: zxcvbn and its dictionaries). Its module is
// large, so it is fetched the first time the person types a new passphrase, never on an ordinary
// visit. This file sits at pkg/snippets/<crate>/js/strength.js; the module at pkg/.
let loading = null;

export function rateStrength(pass) {
  if (!loading) {
    const url = new URL('../../../tacit_wallet_strength.js', import.meta.url).href;
    loading = import(url).then(async (module) => {
      await module.default();
      return module;
    });
    // A failed load may be retried on the next keystroke (the network may be back).
    loading.catch(() => {
      loading = null;
    });
  }
  return loading.then((module) => module.estimate(pass));
}
