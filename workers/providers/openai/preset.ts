import { ApiError } from '../../../shared/errors/ApiError';
import type { Preset } from '../../../shared/catalog/presets';

function refused(field: string, preset: string): ApiError {
  return new ApiError(400, 'unsupported_parameter', `\`${field}\` is not supported by this model's upstream (${preset}).`, { param: field });
}

/**
 * The chat body for a preset's service (docs/providers/presets.md): what it would refuse is refused
 * here with the field named (a `false`/`null` value means "off" and is just left out), the output cap
 * goes under the name the service reads, and an input turn's reasoning under the service's field.
 */
export function presetRequest(name: string, preset: Preset, body: Record<string, unknown>): Record<string, unknown> {
  const out = { ...body };
  for (const f of preset.refuses) {
    if (out[f] === undefined || out[f] === null || out[f] === false) delete out[f];
    else throw refused(f, name);
  }
  if (preset.singleChoice && typeof out.n === 'number' && out.n > 1) throw refused('n', name);
  if (preset.refusesMessageName && Array.isArray(out.messages) && out.messages.some((m) => typeof (m as { name?: unknown } | null)?.name === 'string')) {
    throw refused('messages[].name', name);
  }
  const cap = preset.maxTokensField;
  if (cap) {
    const other = cap === 'max_tokens' ? 'max_completion_tokens' : 'max_tokens';
    if (out[other] !== undefined) {
      if (out[cap] === undefined) out[cap] = out[other];
      delete out[other];
    }
  }
  if (preset.reasoningField === 'reasoning' && Array.isArray(out.messages)) {
    out.messages = (out.messages as Array<Record<string, unknown>>).map((m) => {
      if (!m || typeof m !== 'object' || m.reasoning_content === undefined) return m;
      const { reasoning_content, ...rest } = m;
      return { ...rest, reasoning: reasoning_content };
    });
  }
  return out;
}

/**
 * An answer or chunk in the canonical fields: the service's reasoning field read as
 * `reasoning_content`, its cached-token count as `prompt_tokens_details.cached_tokens`.
 */
export function presetAnswer(preset: Preset, answer: Record<string, unknown>): void {
  const usage = answer.usage as Record<string, unknown> | null | undefined;
  const cached = preset.cachedTokensField && usage ? usage[preset.cachedTokensField] : undefined;
  if (usage && typeof cached === 'number') {
    const details = (usage.prompt_tokens_details as Record<string, unknown> | null | undefined) ?? {};
    if (typeof details.cached_tokens !== 'number') usage.prompt_tokens_details = { ...details, cached_tokens: cached };
  }
  if (preset.reasoningField !== 'reasoning' || !Array.isArray(answer.choices)) return;
  for (const c of answer.choices as Array<Record<string, unknown> | null>) {
    for (const part of [c?.message, c?.delta] as Array<Record<string, unknown> | undefined>) {
      if (part && typeof part === 'object' && 'reasoning' in part) {
        if (typeof part.reasoning === 'string' && part.reasoning_content === undefined) part.reasoning_content = part.reasoning;
        delete part.reasoning;
      }
    }
  }
}
