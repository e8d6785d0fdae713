// Types for the encoder core of the qrcode package (lib/core/qrcode.js), imported directly: the
// package's main entry pulls in its Node renderers (fs, pngjs), which a plugin isolate lacks.
declare module 'qrcode/lib/core/qrcode' {
  import type { QRCode, QRCodeOptions } from 'qrcode';

  const core: { create(text: string, options?: QRCodeOptions): QRCode };
  export default core;
}
