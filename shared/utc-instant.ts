import { storableInstant } from './iso-instant';

/**
 * The instant a UTC date or date-time without a zone names (`YYYY-MM-DD`, taken as its midnight,
 * `YYYY-MM-DDTHH:MM`, `YYYY-MM-DDTHH:MM:SS`), or undefined when it does not exist: Date takes
 * 2026-02-31 or 24:00 and rolls them over into another day, so the instant must write back as the
 * text it was read from; year 0 (which PostgreSQL refuses) is none either. The caller checks the form (which of these it accepts).
 */
export function utcInstant(text: string): Date | undefined {
  const t = new Date(`${text}${text.length === 10 ? 'T00:00' : ''}Z`);
  return !Number.isNaN(t.getTime()) && storableInstant(t) && t.toISOString().startsWith(text) ? t : undefined;
}
