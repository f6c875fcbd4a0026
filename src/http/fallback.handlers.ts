import type { RequestHandler } from 'express';
import { AppError } from '../errors';

/** Answers for the methods a path does not serve, and for paths that do not exist. */
export function methodNotAllowed(allow: string): RequestHandler {
  return (req) => {
    throw new AppError('method_not_allowed', `${req.method} is not allowed here; this path allows ${allow}.`, {
      headers: { Allow: allow },
    });
  };
}

/** OPTIONS without CORS (or from an origin CORS_ORIGINS does not list): the methods, never a 401. */
export function allowedMethods(allow: string): RequestHandler {
  return (_req, res) => {
    res.set('Allow', allow).status(204).end();
  };
}

/** The 404, naming what the resources serve (`/items and /items/{id}`). */
export function notFound(served: readonly string[]): RequestHandler {
  const what = served.join(' and ');
  return (req) => {
    throw new AppError('not_found', `There is nothing at ${req.path}; the API serves ${what}.`);
  };
}
