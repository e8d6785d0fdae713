// sys/wrapping/*: wrap arbitrary data, unwrap (once), look up and rewrap response-wrapping tokens.
// The wrapped responses live with their tokens on the token-store shards.

import type { LogicalRequest, LogicalResponse, PathDef } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import type { FieldData, FieldSchemas } from '../../framework/fields';
import { parseJson } from '../../framework/json-numbers';
import type { SystemServices } from '../context';

export const INVALID_WRAPPING_TOKEN = 'wrapping token is not valid or does not exist';

const tokenFields: FieldSchemas = {
  token: { type: 'string', description: 'The wrapping token (default: the token the request is made with).' },
};

/** The wrapping token a request names: in the body, or else the one it is made with. */
function wrappingToken(req: LogicalRequest, f: FieldData): string {
  const token = f.get<string>('token') || req.clientToken || '';
  if (!token) throw badRequest('missing "token" value in input');
  return token;
}

export function wrappingPaths(s: SystemServices): PathDef[] {
  const w = s.wrapping;
  return [
    {
      pattern: 'wrapping/wrap',
      arbitraryData: true,
      summary: 'Wraps the request body in a response-wrapping token (needs X-Vault-Wrap-TTL).',
      operations: {
        update: async (req): Promise<LogicalResponse> => {
          if (!req.wrapTTL) throw badRequest('endpoint requires response wrapping to be used');
          if (Object.keys(req.data).length === 0) throw badRequest('empty wrap calls are not supported');
          return { data: { ...req.data } };
        },
      },
    },
    {
      pattern: 'wrapping/unwrap',
      fields: tokenFields,
      summary: 'Returns the response a wrapping token holds, spending the token.',
      operations: {
        update: async (req, f): Promise<LogicalResponse> => {
          const record = await w.unwrap(wrappingToken(req, f));
          if (!record) throw badRequest(INVALID_WRAPPING_TOKEN);
          // Kept as text: parsed with its numbers exact, as the client would have read them.
          return { raw: { status: 200, body: parseJson(record.response) } };
        },
      },
    },
    {
      pattern: 'wrapping/lookup',
      fields: tokenFields,
      summary: 'Creation details of a wrapping token, without spending it.',
      operations: {
        update: async (req, f): Promise<LogicalResponse> => {
          const record = await w.peek(wrappingToken(req, f));
          if (!record) throw badRequest(INVALID_WRAPPING_TOKEN);
          return {
            data: { creation_ttl: record.creationTTL, creation_time: record.creationTime, creation_path: record.creationPath },
          };
        },
      },
    },
    {
      pattern: 'wrapping/rewrap',
      fields: tokenFields,
      summary: 'Moves a wrapped response to a new wrapping token with the same TTL; the old one stops working.',
      operations: {
        update: async (req, f): Promise<LogicalResponse> => {
          const token = wrappingToken(req, f);
          const record = await w.peek(token);
          if (!record) throw badRequest(INVALID_WRAPPING_TOKEN);
          const wrapInfo = await w.store({ ...record, creationTime: w.now() });
          // Only one rewrap (or unwrap) of the old token wins; a loser's new token must not survive.
          if (!(await w.unwrap(token))) {
            await w.revoke(wrapInfo.token);
            throw badRequest(INVALID_WRAPPING_TOKEN);
          }
          return { wrapInfo };
        },
      },
    },
  ];
}
