import contentType from 'content-type';
import express, { type Request, type RequestHandler } from 'express';
import { AppError } from '../errors';
import { localsOf } from '../request-locals';
import { MAX_NESTING, nestsTooDeep, parseJson } from './parse-json';

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function requireJson(req: Request): void {
  const header = req.headers['content-type'];
  if (header === undefined) {
    throw new AppError('unsupported_media_type', 'Content-Type is missing; send Content-Type: application/json.');
  }
  let parsed: contentType.ParsedMediaType;
  try {
    parsed = contentType.parse(header);
  } catch (error) {
    throw new AppError('unsupported_media_type', 'Content-Type is malformed; send Content-Type: application/json.', { cause: error });
  }
  if (!JSON_TYPE.test(parsed.type)) {
    throw new AppError('unsupported_media_type', `Content-Type ${parsed.type} is not JSON; send Content-Type: application/json.`);
  }
  const charset = parsed.parameters.charset?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError('unsupported_charset', 'The body must be UTF-8; drop the charset parameter or send charset=utf-8.');
  }
}

function parse(raw: unknown): object {
  if (!Buffer.isBuffer(raw) || raw.length === 0) {
    throw new AppError('malformed_json', 'The body is empty; send a JSON object.');
  }
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch (error) {
    throw new AppError('unsupported_charset', 'The body is not valid UTF-8.', { cause: error });
  }
  if (nestsTooDeep(text)) {
    throw new AppError('nesting_too_deep', `The body nests arrays and objects deeper than ${MAX_NESTING} levels.`);
  }
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    throw new AppError('malformed_json', `The body is not valid JSON: ${(error as Error).message}.`, { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError('body_not_object', `The body must be a JSON object, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`}.`);
  }
  return value;
}

/**
 * Reads a JSON body of at most limitBytes with integers kept exact (int64 ids). The raw reader drains an
 * oversized body before the error is answered, so a proxy still sending it sees our 400, not a reset.
 */
export function jsonBody(limitBytes: number): RequestHandler {
  const readRaw = express.raw({ type: () => true, limit: limitBytes, inflate: false });
  return (req, res, next) => {
    requireJson(req);
    if (req.headers.expect?.toLowerCase() === '100-continue') {
      // Invite the body only when it will be read: authentication has passed, and the size is within the limit.
      const declared = Number(req.headers['content-length']);
      if (declared > limitBytes) throw new AppError('body_too_large', `The body is larger than the ${limitBytes} bytes this service accepts.`);
      res.writeContinue();
    }
    readRaw(req, res, (error?: unknown) => {
      if (error !== undefined) {
        next(error);
        return;
      }
      try {
        if (Buffer.isBuffer(req.body)) localsOf(res).rawBody = req.body;
        req.body = parse(req.body);
      } catch (parseError) {
        next(parseError);
        return;
      }
      next();
    });
  };
}
