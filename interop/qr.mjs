// Reads the QR code in a PNG with an independent decoder (jsQR, on pngjs), for
// tests/tests/vault_bridge.rs: the bridge's offer shown as a QR code must decode to the offer
// the page shows as text. Reads { "png": "<path>" } on stdin; prints { "text": "<decoded>" } or
// { "text": null } when no code is found.
import { readFileSync } from 'node:fs';
import { PNG } from 'pngjs';
import jsQR from 'jsqr';

const input = JSON.parse(readFileSync(0, 'utf8'));
const png = PNG.sync.read(readFileSync(input.png));
const found = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length),
  png.width, png.height);
process.stdout.write(JSON.stringify({ text: found ? found.data : null }));
