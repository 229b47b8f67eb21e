import { ApiError } from '../errors/ApiError';
import type { CatalogModel } from './catalog';
import type { CostPrices } from '../limits/usage-cost';

/**
 * A chat model's audio token prices (`prices.audio_input_token`, `prices.audio_output_token`,
 * micro-dollars per token; docs/catalog.md "Audio tokens"). OpenAI bills a chat completion's audio
 * tokens apart from its text tokens and far above them (gpt-4o-audio-preview: text $2.50 / $10, audio
 * $40 / $80 per 1M input / output tokens: developers.openai.com/api/docs/models/gpt-4o-audio-preview)
 * and reports them inside the token counts (its API document's CompletionUsage:
 * `prompt_tokens_details.audio_tokens`, "Audio input tokens present in the prompt";
 * `completion_tokens_details.audio_tokens`). A request an OpenAI-compatible upstream is sent as
 * written may ask for them: audio output (`audio`, `modalities` naming `audio`) and `input_audio`
 * content parts (translated upstreams refuse both: workers/providers/unsupported.ts).
 */
export interface AudioAsked {
  /** `audio` given, or `modalities` naming `audio`: the field to name when refused. */
  output?: 'audio' | 'modalities';
  /** The first `input_audio` part's place (`messages[i].content[j]`), found by the shared-account scan (api/routes/chat/shared-account-ids.ts). */
  input?: string;
}

/** The field by which a chat body asks audio output (`audio` given, or `modalities` naming `audio`), or undefined. */
export const audioOutputField = (body: Record<string, unknown>): AudioAsked['output'] =>
  body.audio != null ? 'audio' : Array.isArray(body.modalities) && body.modalities.includes('audio') ? 'modalities' : undefined;

/** What a chat body on the platform's credential asks in audio, or undefined (the common case: `audio` and `modalities` absent, no input_audio part). */
export function audioAsked(body: Record<string, unknown>, inputAudio: string | undefined): AudioAsked | undefined {
  const output = audioOutputField(body);
  if (!output && !inputAudio) return undefined;
  return { output, input: inputAudio };
}

/** Whether model `m` prices every audio the request asks (a fallback that does not is left out of the route). */
export const pricesAudio = (m: CatalogModel, a: AudioAsked): boolean =>
  (!a.output || m.prices.audio_output_token !== undefined) && (!a.input || m.prices.audio_input_token !== undefined);

/**
 * On the platform's credential, audio a model has no audio price for is refused 400 before a lane, a
 * budget or the upstream is reached: the platform's account would pay the audio rate while the
 * organization is billed the text rate. A caller's own provider key (passthrough) is never checked.
 */
export function refuseUnpricedAudio(m: CatalogModel, a: AudioAsked): void {
  if (a.output && m.prices.audio_output_token === undefined) {
    const what = a.output === 'audio' ? '`audio`' : '`modalities` with `audio`';
    throw new ApiError(400, 'unsupported_parameter', `${what}: audio output is not available on this model (it has no audio output price); ask for text only.`, { param: a.output });
  }
  if (a.input && m.prices.audio_input_token === undefined) {
    throw new ApiError(400, 'unsupported_parameter', `Invalid '${a.input}': audio input (\`input_audio\`) is not available on this model (it has no audio input price); send text instead.`, { param: a.input });
  }
}

/**
 * Per token, model `m`'s audio price minus its text price, for the audio the request asks (`a`): the
 * step's `audioPriceDelta`, `output_token` when audio output is asked, `input_token` when
 * `input_audio` parts are sent (an answer's audio tokens, counted among its text tokens, cost that
 * much more: workers/pools/audio-price.ts; the platform's credential sends no earlier answer's audio
 * by id, api/routes/chat/shared-account-ids.ts, so an audio not asked has no tokens); and the prices a
 * budget holds the request at on `m` (its audio price for the audio asked, where dearer).
 */
export function audioPrices(m: CatalogModel, a: AudioAsked): { delta: CostPrices; held: CostPrices } {
  const p = m.prices;
  const delta: CostPrices = {};
  const held: CostPrices = { input_token: p.input_token ?? 0, output_token: p.output_token ?? 0 };
  if (a.input && p.audio_input_token !== undefined) {
    delta.input_token = p.audio_input_token - (p.input_token ?? 0);
    held.input_token = Math.max(held.input_token!, p.audio_input_token);
  }
  if (a.output && p.audio_output_token !== undefined) {
    delta.output_token = p.audio_output_token - (p.output_token ?? 0);
    held.output_token = Math.max(held.output_token!, p.audio_output_token);
  }
  return { delta, held };
}
