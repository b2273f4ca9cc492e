// API keys (/v1/api-keys): the workspace's keys; a new one (its secret in the answer, once); revoking one.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';

export const useApiKeys = (ws: string) =>
  useQuery({ queryKey: keys.apiKeys(ws), queryFn: () => ok(api.GET('/v1/api-keys')) });

export const useCreateApiKey = (ws: string) =>
  useChange((body: Body<'/v1/api-keys', 'post'>) => ok(api.POST('/v1/api-keys', { body })), [keys.apiKeys(ws)]);

export const useRevokeApiKey = (ws: string) =>
  useChange((id: string) => ok(api.DELETE('/v1/api-keys/{id}', { params: { path: { id } } })), [keys.apiKeys(ws)]);
