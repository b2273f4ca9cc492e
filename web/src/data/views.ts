// Saved views: the inbox's sidebar and the settings' list.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';

export const useViews = (ws: string) => useQuery({ queryKey: keys.views(ws), queryFn: () => ok(api.GET('/v1/views')) });
