import type { Request, Response } from 'express';
import { ApiError } from '../../shared/errors/ApiError';
import { pageAreaOf } from './error-page';

/**
 * A refusal a page draws itself (a wrong sign-in, a weak new password, an invitation's form): a
 * browser gets the page again at the refusal's status with its message; anyone else (a JSON client)
 * gets the error envelope through the one error handler, as every other refusal of the dashboard
 * and the console (docs/web.md).
 */
export function refuseOnPage(req: Request, res: Response, err: ApiError, render: (message: string) => string): void {
  if (!pageAreaOf(req, res)) throw err;
  res.status(err.status).send(render(err.message));
}

/** A sign-in with a wrong email or password (one answer for both). */
export const wrongSignIn = (): ApiError => new ApiError(401, 'invalid_credentials', 'Wrong email or password.');
