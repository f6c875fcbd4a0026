import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Runs middleware one after another as a single router layer. Each layer of the Express router costs a
 * matching pass and its own garbage on every request, so middleware that runs on every request is grouped:
 * the order inside still reads top to bottom. Like the router, it
 * passes a thrown error or a rejected promise to `next`, and stops where a handler ends the response.
 */
export function inSequence(...handlers: RequestHandler[]): RequestHandler {
  if (handlers.length === 1) return handlers[0] as RequestHandler;
  return (req: Request, res: Response, next: NextFunction) => {
    let index = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null) {
        next(err);
        return;
      }
      const handler = handlers[index];
      index += 1;
      if (handler === undefined) {
        next();
        return;
      }
      try {
        const result: unknown = handler(req, res, step);
        // As the router does: a promise rejected with nothing still counts as an error.
        if (result instanceof Promise) result.catch((error: unknown) => step(error ?? new Error('Rejected promise')));
      } catch (error) {
        step(error);
      }
    };
    step();
  };
}
