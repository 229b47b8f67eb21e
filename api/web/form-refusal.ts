import type { Request, Response } from 'express';
import { ApiError } from '../../shared/errors/ApiError';
import { html, type Html } from './html';
import { pageAreaOf } from './error-page';

/** A refused form as its page shows it again: what was typed, and what was wrong with which field. */
export interface FormState {
  /** which form of the page was refused, when a page has several (`formOf` picks it out) */
  form?: string;
  values: Record<string, string>;
  /** fields sent several times (a group of checkboxes) */
  lists: Record<string, string[]>;
  /** the form field at fault (its `name`), when the refusal names one */
  field?: string;
  message: string;
}

/**
 * Runs a form's POST handler. When it is refused with a 400 or 409 that names a field (`ApiError`'s
 * `param`) and the client is a browser on a web page, `again` renders the form's page once more with
 * what was typed and the message next to the field, at the refusal's status; anyone else (a JSON
 * client, any other refusal) gets the error as before, through the one error handler. `at.field` is
 * the field a refusal without a `param` is about (a form of one field, or the shared code's checks
 * that name none); `at.form` tells a page with several forms which one was refused.
 */
export async function withFormRefusal(
  req: Request,
  res: Response,
  run: () => Promise<void>,
  again: (state: FormState) => Promise<void>,
  at: { form?: string; field?: string } = {},
): Promise<void> {
  try {
    await run();
  } catch (err) {
    const field = err instanceof ApiError ? (err.param ?? at.field) : undefined;
    if (!(err instanceof ApiError) || ![400, 409].includes(err.status) || !field || !pageAreaOf(req, res)) throw err;
    const sent = Object.entries((req.body ?? {}) as Record<string, unknown>).filter(([k]) => k !== '_csrf');
    const values = Object.fromEntries(sent.filter(([, v]) => typeof v === 'string')) as Record<string, string>;
    const lists = Object.fromEntries(sent.filter(([, v]) => Array.isArray(v)).map(([k, v]) => [k, (v as unknown[]).map(String)]));
    res.status(err.status);
    await again({ form: at.form, values, lists, field, message: err.message });
  }
}

/**
 * A GET form's query as `parse` reads it; or, when a browser's page is refused naming a field (an
 * ApiError 400 with `param`), what the page draws instead (`fallback` of the query's `fields` as
 * typed) with the refusal for its form: what was typed and the message at the field, at status 400.
 * A JSON client, or any other error, gets the error through the one error handler.
 */
export function queryOrRefusal<T>(req: Request, res: Response, fields: readonly string[], parse: () => T, fallback: (typed: Record<string, string>) => T): { value: T; refusal?: FormState } {
  try {
    return { value: parse() };
  } catch (err) {
    if (!(err instanceof ApiError) || !err.param || !pageAreaOf(req, res)) throw err;
    res.status(400);
    const values = Object.fromEntries(fields.map((f) => [f, typeof req.query[f] === 'string' ? String(req.query[f]) : '']));
    return { value: fallback(values), refusal: { values, lists: {}, field: err.param, message: err.message } };
  }
}

/** The refusal when it belongs to `form` (a page of several forms shows it only there). */
export const formOf = (state: FormState | undefined, form: string): FormState | undefined => (state?.form === form ? state : undefined);

/** Whether a checkbox shows ticked: as sent when the form was refused, else `fallback`. */
export function ticked(state: FormState | undefined, name: string, value: string, fallback = false): boolean {
  if (!state) return fallback;
  return state.values[name] === value || (state.lists[name] ?? []).includes(value);
}

/** A page's "saved" line, shown after a write succeeded (role="status"). */
export const savedNotice = (text: string | undefined): Html | '' => (text ? html`<div class="card" role="status" data-test="saved"><p>${text}</p></div>` : '');

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
