// The workspace record: its name, slug (the help center's and portal's addresses) and settings.
import { useQuery } from '@tanstack/react-query';
import { api, ok, type Schemas } from '../lib/api';
import { keys } from './keys';

export type WorkspaceRecord = Schemas['Workspace'];

export const useWorkspaceRecord = (ws: string) =>
  useQuery({ queryKey: keys.workspace(ws), queryFn: () => ok(api.GET('/v1/workspace')) });
