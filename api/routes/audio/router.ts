import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context';
import { only } from '../only';
import { killSwitch } from '../../middleware/kill-switch';
import { capabilityPolicy } from '../../../shared/policies/capability';
import { audioErrors } from '../../../shared/audio/errors';
import { encrypt } from '../../../shared/crypto';
import { config } from '../../../shared/config/env';
import { dispatchTranscription, resolveTranscriptionModel } from '../../dispatch/audio';
import { targetOf } from '../../dispatch/target';
import { readAudioUpload } from './upload';
import { GRANULARITIES_PART, parseTranscriptionParts } from './parts';
import { sendTranscript } from './render';
import { listTranscriptionModels } from './models';
import { chargeUnanswered, holdAudioCharge } from './billing';

/**
 * `POST /v1/audio/transcriptions`: switches and org policy are checked before a byte of the body
 * is read; the body streams to the spool; the spool file is deleted however the request ends.
 */
function transcribe(ctx: AppContext) {
  return async (req: Request, res: Response) => {
    const cfg = config();
    const deadlineAt = Date.now() + cfg.audioDeadlineMs;
    if (capabilityPolicy(req.auth!.org, 'audio') === 'off') throw audioErrors.disabledForOrg();
    if (!req.is('multipart/form-data')) throw audioErrors.invalidRequest('Content-Type must be multipart/form-data.');
    const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity') throw audioErrors.invalidRequest('Compressed request bodies are not accepted.');

    const upload = await readAudioUpload(req, res, cfg.audioBodyReadTimeoutMs);
    try {
      const p = parseTranscriptionParts(upload.parts, upload.file);
      const { model, audio } = await resolveTranscriptionModel(ctx, req, p.model);
      if (p.words && !audio.supports_word_timestamps) {
        throw audioErrors.unsupportedParameter("The requested 'model' does not support word timestamps.", GRANULARITIES_PART);
      }
      const charge = await holdAudioCharge(req, model, audio.max_duration_seconds);
      let transcript;
      try {
        transcript = await dispatchTranscription(
          ctx,
          req,
          res,
          model,
          p.model,
          {
            target: targetOf(model),
            spoolId: p.file.spoolId,
            fileExt: p.file.ext ?? '',
            contentType: p.file.contentType,
            language: p.language,
            temperature: p.temperature,
            sealedPrompt: p.prompt !== undefined ? encrypt(p.prompt) : undefined,
            words: p.words,
            maxDurationSeconds: audio.max_duration_seconds,
          },
          deadlineAt,
        );
      } catch (err) {
        await chargeUnanswered(ctx, req, charge, err); // nothing charged, unless the worker claimed its delivery first
        throw err;
      }
      await charge.settle(transcript.duration);
      sendTranscript(res, transcript, p.responseFormat);
    } finally {
      await upload.cleanup();
    }
  };
}

/** Transcription routes; mounted before the shared JSON parser (they read multipart themselves). */
export function audioRouter(ctx: AppContext): Router {
  const r = Router();
  const switchedOff = killSwitch(ctx.switches, 'transcription');
  only(r, '/v1/audio/transcriptions/models', { get: [switchedOff, listTranscriptionModels(ctx)] });
  only(r, '/v1/audio/transcriptions', { post: [switchedOff, transcribe(ctx)] });
  return r;
}
