import type { Request, Response } from 'express';
import { ApiError } from '../../shared/errors/ApiError';
import { html, type Html } from './html';
import { pageAreaOf } from './error-page';

/** A refused form as its page shows it again: what was typed, and what was wrong with which field. */
export interface FormState {
  values: Record<string, string>;
  /** the form field at fault (its `name`), when the refusal names one */
  field?: string;
  message: string;
}

/**
 * Runs a form's POST handler. When it is refused with a 400 or 409 that names a field (`ApiError`'s
 * `param`) and the client is a browser on a web page, `again` renders the form's page once more with
 * what was typed and the message next to the field, at the refusal's status; anyone else (a JSON
 * client, any other refusal) gets the error as before, through the one error handler.
 */
export async function withFormRefusal(req: Request, res: Response, run: () => Promise<void>, again: (state: FormState) => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    if (!(err instanceof ApiError) || ![400, 409].includes(err.status) || !err.param || !pageAreaOf(req, res)) throw err;
    const values = Object.fromEntries(Object.entries((req.body ?? {}) as Record<string, unknown>).filter(([k, v]) => k !== '_csrf' && typeof v === 'string')) as Record<string, string>;
    res.status(err.status);
    await again({ values, field: err.param, message: err.message });
  }
}

/** The value a field shows: what was typed when the form was refused, else `fallback`. */
export const typed = (state: FormState | undefined, name: string, fallback = ''): string => state?.values[name] ?? fallback;

/** The refusal's message, placed after the field it names (nothing for other fields). */
export function fieldError(state: FormState | undefined, name: string): Html | '' {
  return state?.field === name ? html`<p class="error" role="alert" id="${name}-error" data-test="field-error-${name}">${state.message}</p>` : '';
}

/** `aria-invalid` and `aria-describedby` for the field at fault. */
export function invalidAttrs(state: FormState | undefined, name: string): Html | '' {
  return state?.field === name ? html` aria-invalid="true" aria-describedby="${name}-error"` : '';
}
