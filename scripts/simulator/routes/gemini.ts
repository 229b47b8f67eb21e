import crypto from 'crypto';
import { Router, type Request, type Response } from 'express';
import type { KnobStore } from '../knobs';
import type { RequestLog } from '../request-log';
import { applyFaults, sleep } from '../faults';
import { countTokens, replyWords } from '../text';
import { embedText } from '../vectors';
import { SIM_EMBED_DIMENSIONS } from './embeddings';

type Part = Record<string, unknown> & { text?: string; thought?: boolean; inlineData?: { mimeType?: string; data?: string }; functionCall?: { id?: string; name: string; args?: unknown }; functionResponse?: { id?: string; name: string; response?: { output?: unknown } }; thoughtSignature?: string };
type Content = { role?: string; parts?: Part[] };

/** The fields of a GenerateContentRequest (Gemini API reference); anything else is refused as the API does. */
const REQUEST_FIELDS = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent']);

/** google.rpc.Code names the API sends with each HTTP status. */
const GOOGLE_STATUS: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED' };

function googleError(res: Response, code: number, status: string, message: string, details?: unknown[]): void {
  res.status(code).json({ error: { code, message, status, ...(details ? { details } : {}) } });
}

/**
 * A knob's failure as Google answers it: never a Retry-After header; a 429's wait is a RetryInfo
 * detail (`retryDelay`, a protobuf Duration), as the Gemini API sends it.
 */
function knobError(res: Response, code: number, retryAfter: number | undefined): void {
  if (code === 429 && retryAfter !== undefined) {
    const message = `You exceeded your current quota, please check your plan and billing details. Please retry in ${retryAfter}s.`;
    return googleError(res, 429, 'RESOURCE_EXHAUSTED', message, [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfter}s` }]);
  }
  googleError(res, code, GOOGLE_STATUS[code] ?? 'INTERNAL', `simulated status ${code}`);
}

/** An invalid key: 400 INVALID_ARGUMENT with ErrorInfo reason API_KEY_INVALID (not a 401 or 403). */
function keyInvalid(res: Response): void {
  const message = 'API key not valid. Please pass a valid API key.';
  googleError(res, 400, 'INVALID_ARGUMENT', message, [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
    { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message },
  ]);
}

function partText(p: Part): string {
  if (typeof p.text === 'string') return p.text;
  if (p.functionResponse) return String(p.functionResponse.response?.output ?? JSON.stringify(p.functionResponse.response ?? {}));
  if (p.inlineData) return `[${p.inlineData.mimeType} ${Buffer.from(p.inlineData.data ?? '', 'base64').length} bytes]`;
  return '';
}

/** System instructions seen before: a repeat is reported as implicitly cached, as the API does. */
const seenSystems = new Set<string>();

/** Problems the real API answers 400 for, checked here so that a wrong translation fails the tests. */
function invalid(body: Record<string, unknown>): string | undefined {
  const unknown = Object.keys(body).find((k) => !REQUEST_FIELDS.has(k));
  if (unknown) return `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`;
  const contents = body.contents as Content[] | undefined;
  if (!Array.isArray(contents) || !contents.length) return '* GenerateContentRequest.contents: contents is not specified';
  for (const c of contents) {
    if (c.role !== 'user' && c.role !== 'model') return `Please use a valid role: user, model.`;
    if (!Array.isArray(c.parts) || !c.parts.length) return '* GenerateContentRequest.contents.parts: contents.parts must not be empty.';
  }
  // Gemini 3: the function calls of the current turn must carry their thought signature back.
  const lastUserText = contents.map((c, i) => (c.role === 'user' && c.parts!.some((p) => typeof p.text === 'string') ? i : -1)).reduce((a, b) => Math.max(a, b), -1);
  for (const c of contents.slice(lastUserText + 1)) {
    const first = c.parts!.find((p) => p.functionCall);
    if (c.role === 'model' && first && !first.thoughtSignature) return 'Function call is missing a thought_signature in functionCall parts.';
  }
  return undefined;
}

/** The Gemini API (`/v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`, `:batchEmbedContents`). */
export function geminiRoutes(knobs: KnobStore, log: RequestLog): Router {
  const r = Router();
  r.post(/^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/, async (req: Request, res: Response) => {
    const entry = log.record(req, res);
    const model = String((req.params as Record<string, string>)[0]);
    const method = String((req.params as Record<string, string>)[1]);
    entry.model = model;
    if (!req.headers['x-goog-api-key']) return googleError(res, 403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
    const body = (req.body ?? {}) as Record<string, unknown>;
    const k = knobs.take(model);
    // The knobs' statuses answer in Google's error shape ({error: {code, message, status}}).
    if (await applyFaults({ ...k, status: undefined }, res)) return;
    if (k.keyInvalid) return keyInvalid(res);
    if (k.status && k.status >= 400) return knobError(res, k.status, k.retryAfter);
    if (method === 'batchEmbedContents') return embedBatch(model, body, res);
    if (method === 'streamGenerateContent' && req.query.alt !== 'sse') return googleError(res, 400, 'INVALID_ARGUMENT', 'The simulator streams only with alt=sse.');
    const bad = invalid(body);
    if (bad) return googleError(res, 400, 'INVALID_ARGUMENT', bad);

    const contents = body.contents as Content[];
    const gen = (body.generationConfig ?? {}) as { maxOutputTokens?: number; stopSequences?: string[]; responseMimeType?: string; thinkingConfig?: { includeThoughts?: boolean }; responseLogprobs?: boolean; logprobs?: number };
    const system = ((body.systemInstruction as Content | undefined)?.parts ?? []).map(partText).join('\n');
    const prompt = [system, ...contents.flatMap((c) => c.parts!.map(partText))].join('\n');
    const last = contents.at(-1)!;
    const lastText = last.parts!.map(partText).join(' ');
    const answering = last.parts!.some((p) => p.functionResponse);
    const maxTokens = gen.maxOutputTokens ?? 8192;
    const decls = ((body.tools as Array<{ functionDeclarations?: Array<{ name: string }> }> | undefined) ?? []).flatMap((t) => t.functionDeclarations ?? []);
    const mode = (body.toolConfig as { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } } | undefined)?.functionCallingConfig;
    const tool = answering || !decls.length || mode?.mode === 'NONE' ? undefined : mode?.mode === 'ANY' ? (mode.allowedFunctionNames?.[0] ?? decls[0].name) : /\b(use|call) (a |the )?tool\b/i.test(lastText) ? decls[0].name : undefined;
    let words = replyWords(lastText, k.outputWords ?? 12, maxTokens);
    let finish = words.length >= maxTokens ? 'MAX_TOKENS' : 'STOP';
    const cut = words.findIndex((w) => (gen.stopSequences ?? []).includes(w));
    if (cut >= 0) {
      words = words.slice(0, cut);
      finish = 'STOP';
    }
    if (gen.responseMimeType === 'application/json') words = [JSON.stringify({ reply: words.join(' ') })];
    const thought = gen.thinkingConfig?.includeThoughts ? `Considering: ${lastText.slice(0, 80)}` : undefined;
    const parts: Part[] = [];
    if (thought) parts.push({ text: thought, thought: true });
    if (tool) parts.push({ functionCall: { ...(k.callIds ? { id: crypto.randomBytes(6).toString('hex') } : {}), name: tool, args: { query: lastText.slice(0, 100) } }, thoughtSignature: crypto.randomBytes(24).toString('base64') });
    else words.forEach((w, i) => parts.push({ text: i === 0 ? w : ` ${w}` }));
    const promptTokens = countTokens(prompt) + 3 * contents.length;
    const cached = system && seenSystems.has(system) ? countTokens(system) : 0;
    if (system) seenSystems.add(system);
    const usageMetadata: Record<string, unknown> = {
      promptTokenCount: promptTokens,
      candidatesTokenCount: tool ? countTokens(JSON.stringify(parts.at(-1)!.functionCall)) : countTokens(words.join(' ')),
      ...(cached ? { cachedContentTokenCount: cached } : {}),
      ...(thought ? { thoughtsTokenCount: countTokens(thought) } : {}),
    };
    usageMetadata.totalTokenCount = promptTokens + (usageMetadata.candidatesTokenCount as number) + ((usageMetadata.thoughtsTokenCount as number) ?? 0);
    const responseId = crypto.randomBytes(10).toString('base64url');
    const withLogprobs = gen.responseLogprobs === true && !k.noLogprobs;
    if (method === 'generateContent') {
      res.json({ candidates: [{ content: { parts, role: 'model' }, finishReason: finish, index: 0, ...(withLogprobs ? logprobsOf(parts, 0, gen.logprobs ?? 0) : {}) }], usageMetadata, modelVersion: model, responseId });
      return;
    }
    res.status(200).setHeader('Content-Type', 'text/event-stream');
    res.flushHeaders();
    const pieces = parts.map((p, i) => {
      const lastOne = i === parts.length - 1;
      const lp = withLogprobs ? logprobsOf([p], parts.slice(0, i).filter((q) => typeof q.text === 'string' && !q.thought).length, gen.logprobs ?? 0) : {};
      const cand: Record<string, unknown> = { content: { parts: [p], role: 'model' }, index: 0, ...(lastOne ? { finishReason: finish } : {}), ...lp };
      return `data: ${JSON.stringify({ candidates: [cand], usageMetadata: lastOne ? usageMetadata : { promptTokenCount: promptTokens, totalTokenCount: promptTokens }, modelVersion: model, responseId })}\r\n\r\n`;
    });
    for (let i = 0; i < pieces.length; i++) {
      if (res.destroyed) return;
      if (k.dropAfterChunks !== undefined && i >= k.dropAfterChunks) {
        await sleep(20);
        res.socket?.destroy();
        return;
      }
      res.write(pieces[i]);
      if (k.tokenDelayMs) await sleep(k.tokenDelayMs);
    }
    res.end();
  });
  return r;
}

/**
 * `responseLogprobs`: a candidate's `avgLogprobs` and `logprobsResult` (the API's LogprobsResult,
 * @google/genai: `chosenCandidates` per decoding step, `topCandidates` with `logprobs` tokens each, the
 * chosen one first), over its text parts (not thoughts; a function call has none), one token a part;
 * a streamed chunk's result covers that chunk's tokens. `from` numbers the first token (its log probability).
 */
function logprobsOf(parts: Part[], from: number, top: number): Record<string, unknown> {
  const tokens = parts.filter((p) => typeof p.text === 'string' && !p.thought).map((p) => p.text!);
  const tok = (token: string, i: number) => ({ token, logProbability: -0.01 * (from + i + 1) });
  const chosenCandidates = tokens.map(tok);
  const topCandidates = tokens.map((t, i) => ({ candidates: Array.from({ length: top }, (_, j) => (j === 0 ? tok(t, i) : { token: `alt${j}`, logProbability: -1 - j })) }));
  const avg = chosenCandidates.length ? chosenCandidates.reduce((a, c) => a + c.logProbability, 0) / chosenCandidates.length : 0;
  return { avgLogprobs: avg, logprobsResult: { chosenCandidates, topCandidates } };
}

/** batchEmbedContents: one embedding per request, each request naming the model of the URL. */
function embedBatch(model: string, body: Record<string, unknown>, res: Response): void {
  const requests = body.requests as Array<{ model?: string; content?: Content; outputDimensionality?: number }> | undefined;
  if (!Array.isArray(requests) || !requests.length) return googleError(res, 400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: requests is not specified');
  // the Gemini API's own bound on a batch (and its words)
  if (requests.length > 100) return googleError(res, 400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n');
  const embeddings: Array<{ values: number[] }> = [];
  for (const [i, q] of requests.entries()) {
    if (q.model !== `models/${model}`) return googleError(res, 400, 'INVALID_ARGUMENT', `* BatchEmbedContentsRequest.requests[${i}].model: unexpected model name format`);
    const text = (q.content?.parts ?? []).map(partText).join(' ');
    if (!text) return googleError(res, 400, 'INVALID_ARGUMENT', `* BatchEmbedContentsRequest.requests[${i}].content: contents must not be empty.`);
    const dims = q.outputDimensionality ?? SIM_EMBED_DIMENSIONS;
    if (!Number.isInteger(dims) || dims < 1 || dims > SIM_EMBED_DIMENSIONS) return googleError(res, 400, 'INVALID_ARGUMENT', 'outputDimensionality is out of range.');
    embeddings.push({ values: embedText(text, SIM_EMBED_DIMENSIONS, dims) });
  }
  res.json({ embeddings });
}
