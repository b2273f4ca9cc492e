// The workspace record (/v1/workspace): its name, slug (the help center's and portal's addresses),
// settings and pictures; handing it over and deleting it.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { api, ok, type Schemas } from '../lib/api';
import { type Body, useLiveRefresh } from './change';
import { keys } from './keys';

export type WorkspaceRecord = Schemas['Workspace'];
type Slot = paths['/v1/workspace/images/{slot}']['put']['parameters']['path']['slot'];

export const useWorkspaceRecord = (ws: string) =>
  useQuery({ queryKey: keys.workspace(ws), queryFn: () => ok(api.GET('/v1/workspace')) });

/** The record read again when another admin changes it. */
export const useLiveWorkspaceRecord = (ws: string) => useLiveRefresh(['workspace.updated'], keys.workspace(ws));

/** A mutation whose answer is the record as it is now: the cache holds it (no refetch). */
function useRecordChange<V>(ws: string, fn: (v: V) => Promise<WorkspaceRecord>) {
  const qc = useQueryClient();
  return useMutation({ mutationFn: fn, onSuccess: (next) => qc.setQueryData(keys.workspace(ws), next) });
}

export const useUpdateWorkspace = (ws: string) =>
  useRecordChange(ws, (body: Body<'/v1/workspace', 'patch'>) => ok(api.PATCH('/v1/workspace', { body })));

/** Uploads a picture into one of the workspace's slots (multipart: the file as `file`). */
export const useUploadWorkspaceImage = (ws: string) =>
  useRecordChange(ws, ({ slot, file }: { slot: Slot; file: File }) => {
    const form = new FormData();
    form.append('file', file);
    return ok(
      api.PUT('/v1/workspace/images/{slot}', {
        params: { path: { slot } },
        body: {} as never,
        bodySerializer: () => form,
      }),
    );
  });

export const useRemoveWorkspaceImage = (ws: string) =>
  useRecordChange(ws, (slot: Slot) => ok(api.DELETE('/v1/workspace/images/{slot}', { params: { path: { slot } } })));

export const useTransferWorkspace = () =>
  useMutation({
    mutationFn: (body: Body<'/v1/workspace/transfer', 'post'>) => ok(api.POST('/v1/workspace/transfer', { body })),
  });

export const useDeleteWorkspace = () =>
  useMutation({
    mutationFn: (confirmName: string) => ok(api.DELETE('/v1/workspace', { body: { confirm_name: confirmName } })),
  });
