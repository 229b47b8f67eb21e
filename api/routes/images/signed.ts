import { Router, type Request, type Response } from 'express';
import { only } from '../only';
import { presentedKeys } from '../../middleware/authenticate';
import { verify } from '../../../shared/images/signing';
import { findLiveImage } from '../../../shared/images/store';
import { imageErrors } from '../../../shared/images/errors';
import { imageStorage } from '../../../shared/storage';
import { CONTENT_TYPES } from '../../../shared/images/inspect';
import { imageNow } from '../../../shared/images/clock';

/**
 * `GET /v1/images/{id}/bytes?expires=&signature=`: the target of the content redirect. No API key:
 * the signature is the authority (a browser follows the 302 without one). A tampered or missing
 * signature is 403 `invalid_signature`, a stale one 403 `signature_expired`, an expired or deleted
 * image 404 `image_not_found`.
 */
export function signedImagesRouter(): Router {
  const r = Router();
  only(r, '/v1/images/:id/bytes', { get: (req, res) => sendSigned(req, res) });
  // An answer's `url` (present.ts answerUrl): `…/content?expires=&signature=` opens with no key while
  // its signature holds, as OpenAI's URLs do for an hour. A request that carries a key, or no
  // signature, goes on to the authenticated route as before (302 to the bytes, for the image's 7 days).
  r.get('/v1/images/:id/content', (req, res, next) => {
    const { gatewayKey, upstreamKey } = presentedKeys(req);
    if (gatewayKey || upstreamKey || req.query.signature === undefined) return next();
    sendSigned(req, res).catch(next);
  });
  return r;
}

/** The bytes of an image a signed URL names (`expires`, `signature`), or why not. */
async function sendSigned(req: Request, res: Response): Promise<void> {
  const id = String(req.params.id);
  const now = imageNow();
  const verdict = verify(id, req.query.expires, req.query.signature, now);
  if (verdict === 'invalid') throw imageErrors.invalidSignature();
  if (verdict === 'expired') throw imageErrors.signatureExpired();
  const img = await findLiveImage(id);
  const bytes = img ? await imageStorage().get(img.storageKey) : undefined;
  if (!img || !bytes) throw imageErrors.notFound(id);
  const maxAge = Math.max(0, Math.floor((Number(req.query.expires) * 1000 - now) / 1000));
  res.setHeader('Content-Type', CONTENT_TYPES[img.format]);
  res.setHeader('Content-Length', String(bytes.length));
  res.setHeader('Cache-Control', `private, max-age=${maxAge}`);
  res.setHeader('Content-Disposition', `inline; filename="${img.id}.${img.format}"`);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(req.method === 'HEAD' ? undefined : bytes);
}
