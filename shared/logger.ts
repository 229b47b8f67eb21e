import pino from 'pino';

/**
 * One logger for every process. Request bodies, audio, transcripts and keys are never logged;
 * the redact list is a second line of defence for headers that carry secrets.
 */
export const logger = pino({
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info'),
  redact: {
    paths: [
      'req.headers.authorization',
      'req.headers["x-api-key"]',
      'req.headers["service-api-key"]',
      'headers.authorization',
      'apiKey',
      'secret',
    ],
    censor: '[redacted]',
  },
  base: { pid: process.pid },
});
