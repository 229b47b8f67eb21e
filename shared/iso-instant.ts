import Joi from 'joi';

/**
 * Whether PostgreSQL's `timestamptz` (and every page) holds the instant: JavaScript's Date also
 * writes year 0 (`0000-01-01`, which PostgreSQL refuses: "date/time field value out of range") and
 * years of six digits (`+010000-…`, which it cannot read), so a query or a field naming one was a 500.
 */
export function storableInstant(d: Date): boolean {
  const year = d.getUTCFullYear();
  return year >= 1 && year <= 9999;
}

/** An ISO 8601 date or date-time field between the years 1 and 9999 (storableInstant); other values are Joi's `date.storable`. */
export const isoInstant = () =>
  Joi.string()
    .isoDate()
    .custom((v: string, helpers) => (storableInstant(new Date(v)) ? v : helpers.error('date.storable')))
    .messages({ 'date.storable': '{{#label}} must be a date between the years 0001 and 9999' });
