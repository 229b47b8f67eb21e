import type { CatalogModel } from '../../../shared/catalog/catalog';
import { imageErrors } from '../../../shared/images/errors';

type Range = { min: number; max: number; default?: number };

/** A model's published image limits (catalog `limits`), with conservative fallbacks. */
export interface ImageLimits {
  sizes: string[];
  default_size: string;
  steps?: Range;
  guidance?: Range;
  output_formats: string[];
  default_output_format: string;
  max_n: number;
  max_prompt_chars: number;
  max_negative_prompt_chars: number;
  max_edit_images: number;
}

export function limitsOf(m: CatalogModel): ImageLimits {
  const l = m.limits as Partial<ImageLimits>;
  const sizes = Array.isArray(l.sizes) && l.sizes.length ? l.sizes : ['1024x1024'];
  const formats = Array.isArray(l.output_formats) && l.output_formats.length ? l.output_formats : ['png'];
  return {
    sizes,
    default_size: l.default_size && sizes.includes(l.default_size) ? l.default_size : sizes[0],
    steps: l.steps,
    guidance: l.guidance,
    output_formats: formats,
    default_output_format: l.default_output_format && formats.includes(l.default_output_format) ? l.default_output_format : formats[0],
    max_n: l.max_n ?? 1,
    max_prompt_chars: l.max_prompt_chars ?? 4000,
    max_negative_prompt_chars: l.max_negative_prompt_chars ?? 2000,
    max_edit_images: l.max_edit_images ?? 1,
  };
}

/** The fields every image request shares, after schema validation. */
export interface ImageParams {
  prompt: string;
  size?: string;
  steps?: number;
  guidance?: number;
  negative_prompt?: string;
  seed?: number;
  output_format?: string;
  n?: number;
  response_format?: 'url' | 'b64_json';
  quality?: string;
  style?: string;
  background?: string;
  moderation?: string;
  output_compression?: number;
  user?: string;
  /** Edits only (the edit schema takes it). */
  input_fidelity?: string;
}

/** OpenAI fields accepted and passed to the upstream as they are. */
const FORWARDED = ['quality', 'style', 'background', 'moderation', 'output_compression', 'user', 'input_fidelity'] as const;

/**
 * Checks a request against the model's published limits and returns the upstream fields (with the
 * defaults filled in). Every refusal is a 400 with its own code, before any lane or upstream use.
 */
export function applyLimits(p: ImageParams, lim: ImageLimits): { upstream: Record<string, unknown>; size: string; n: number } {
  if (p.prompt.length > lim.max_prompt_chars) throw imageErrors.promptTooLong('prompt', lim.max_prompt_chars);
  if (p.negative_prompt !== undefined && p.negative_prompt.length > lim.max_negative_prompt_chars) {
    throw imageErrors.promptTooLong('negative_prompt', lim.max_negative_prompt_chars);
  }
  const size = p.size ?? lim.default_size;
  if (!lim.sizes.includes(size)) throw imageErrors.unsupportedSize(size, lim.sizes);
  const n = p.n ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > lim.max_n) throw imageErrors.invalidN(lim.max_n);
  const format = p.output_format ?? lim.default_output_format;
  if (!lim.output_formats.includes(format)) throw imageErrors.unsupportedFormat(format, lim.output_formats);
  // OpenAI: "When using `transparent`, set the output format to `png` or `webp`" (a JPEG has no alpha)
  if (p.background === 'transparent' && format === 'jpeg') {
    throw imageErrors.transparentJpeg();
  }
  if (p.steps !== undefined) {
    if (!lim.steps) throw imageErrors.unsupportedParameter("This model does not take 'steps'.", 'steps');
    if (!Number.isInteger(p.steps) || p.steps < lim.steps.min || p.steps > lim.steps.max) throw imageErrors.invalidSteps(lim.steps.min, lim.steps.max);
  }
  if (p.guidance !== undefined) {
    if (!lim.guidance) throw imageErrors.unsupportedParameter("This model does not take 'guidance'.", 'guidance');
    if (p.guidance < lim.guidance.min || p.guidance > lim.guidance.max) throw imageErrors.invalidGuidance(lim.guidance.min, lim.guidance.max);
  }
  const upstream: Record<string, unknown> = { prompt: p.prompt, n, size, output_format: format };
  for (const k of ['steps', 'guidance', 'negative_prompt', 'seed', ...FORWARDED] as const) {
    if (p[k] !== undefined) upstream[k] = p[k];
  }
  return { upstream, size, n };
}
