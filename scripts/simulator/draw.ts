import crypto from 'crypto';
import sharp from 'sharp';

export type OutputFormat = 'png' | 'jpeg' | 'webp';

/** A deterministic byte stream from a text key (SHA-256 in counter mode). */
function bytesFor(key: string, n: number): Buffer {
  const out: Buffer[] = [];
  for (let i = 0; out.length * 32 < n; i++) out.push(crypto.createHash('sha256').update(`${key}\0${i}`).digest());
  return Buffer.concat(out).subarray(0, n);
}

function encode(img: sharp.Sharp, format: OutputFormat): Promise<Buffer> {
  if (format === 'jpeg') return img.jpeg({ quality: 85 }).toBuffer();
  if (format === 'webp') return img.webp({ quality: 85 }).toBuffer();
  return img.png().toBuffer();
}

/**
 * Draws a real image of the given size from a key (prompt, negative prompt, seed, index): a
 * two-colour diagonal gradient with a few discs. The same key always gives the same pixels.
 */
export async function drawImage(key: string, width: number, height: number, format: OutputFormat): Promise<Buffer> {
  const h = bytesFor(key, 64);
  const a = [h[0], h[1], h[2]];
  const b = [h[3], h[4], h[5]];
  const discs = Array.from({ length: 3 + (h[6] % 4) }, (_, i) => ({
    x: (h[8 + i * 4] / 255) * width,
    y: (h[9 + i * 4] / 255) * height,
    r: (0.05 + (h[10 + i * 4] / 255) * 0.2) * Math.min(width, height),
    c: [h[11 + i * 4], 255 - h[11 + i * 4], h[40 + i]],
  }));
  const px = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = (x / width + y / height) / 2;
      let c = [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
      for (const d of discs) {
        const dx = x - d.x;
        const dy = y - d.y;
        if (dx * dx + dy * dy < d.r * d.r) c = d.c;
      }
      const o = (y * width + x) * 3;
      px[o] = c[0];
      px[o + 1] = c[1];
      px[o + 2] = c[2];
    }
  }
  return encode(sharp(px, { raw: { width, height, channels: 3 } }), format);
}

/** Edits an input image: fitted to the size and tinted by a colour taken from the key. */
export async function editImage(input: Buffer, key: string, width: number, height: number, format: OutputFormat): Promise<Buffer> {
  const h = bytesFor(key, 3);
  const img = sharp(input).resize(width, height, { fit: 'cover' }).removeAlpha().tint({ r: h[0], g: h[1], b: h[2] });
  return encode(img, format);
}
