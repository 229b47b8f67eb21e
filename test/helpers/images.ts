import { expect } from 'chai';
import fs from 'fs/promises';
import sharp from 'sharp';
import { config } from '../../shared/config/env';
import { env } from './harness';
import { keyHeader } from './http';
import { UsageEvent } from '../../shared/db/models';
import { usageSettled } from './usage';

/** Follows an image URL as a browser would: the API call answers 302, the Location is fetched bare. */
export async function followImageUrl(url: string, key: string): Promise<{ bytes: Buffer; contentType: string | null; location: string }> {
  const first = await fetch(url, { headers: keyHeader(key), redirect: 'manual' });
  expect(first.status, await first.clone().text()).to.equal(302);
  const location = first.headers.get('location')!;
  expect(location).to.be.a('string');
  const second = await fetch(location); // no API key: the signature is the authority
  expect(second.status).to.equal(200);
  return { bytes: Buffer.from(await second.arrayBuffer()), contentType: second.headers.get('content-type'), location };
}

/** Real format and dimensions, read by decoding. */
export async function realImage(bytes: Buffer): Promise<{ format: string; width: number; height: number }> {
  const m = await sharp(bytes).metadata();
  return { format: m.format!, width: m.width!, height: m.height! };
}

/** A real PNG of the given size (solid colour). */
export function pngOf(width: number, height: number, rgb: [number, number, number] = [200, 40, 90]): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } } }).png().toBuffer();
}

/** A PNG with an alpha channel: opaque, with a fully transparent 8x8 square (an edit mask's area to edit). */
export function maskOf(width: number, height: number): Promise<Buffer> {
  const hole = Buffer.alloc(8 * 8 * 4); // transparent black
  return sharp({ create: { width, height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 1 } } })
    .composite([{ input: hole, raw: { width: 8, height: 8, channels: 4 }, left: 0, top: 0, blend: 'dest-out' }])
    .png()
    .toBuffer();
}

/**
 * The request's usage event, once the outbox has drained. The id must be a real request id: a
 * missing `x-service-request-id` would otherwise look up `request_id IS NULL` and find nothing,
 * making every "nothing was billed" check pass without looking at the request.
 */
export async function usageFor(requestId: string | null): Promise<UsageEvent | null> {
  expect(requestId, 'x-service-request-id').to.be.a('string').and.match(/^req_/);
  await usageSettled();
  const events = await UsageEvent.findAll({ where: { requestId: requestId! } });
  expect(events.length, 'usage events for one request').to.be.at.most(1);
  return events[0] ?? null;
}

export const gw = () => env().gw.url;

/** The names of the files in the local image storage now (the test run's own directory). */
export async function storedFiles(): Promise<Set<string>> {
  const names = await fs.readdir(config().imageStorageDir).catch(() => [] as string[]);
  return new Set(names.filter((n) => !n.endsWith('.tmp')));
}

/** Files in the image storage now that were not there in `before`. */
export async function filesAddedSince(before: Set<string>): Promise<string[]> {
  return [...(await storedFiles())].filter((n) => !before.has(n));
}
