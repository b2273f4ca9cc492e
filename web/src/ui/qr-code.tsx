// A QR code drawn on a canvas (the `qrcode` library): the app's CSP loads images from its own
// origin only, so no data: URL; a canvas is drawn, not loaded. Used for the two-factor setup link.
import QRCode from 'qrcode';
import { useEffect, useRef, useState } from 'react';

export function QrCode({ text, label, size = 176 }: { text: string; label: string; size?: number }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (!canvas.current) return;
    QRCode.toCanvas(canvas.current, text, { width: size, margin: 2, errorCorrectionLevel: 'M' }).catch(() =>
      setFailed(true),
    );
  }, [text, size]);
  if (failed) return null;
  return <canvas ref={canvas} role="img" aria-label={label} width={size} height={size} className="qr-code" />;
}
