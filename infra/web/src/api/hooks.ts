// Data fetching for pages: TanStack Query over the typed endpoints, keyed by the
// route and its request, so pages share answers and refetch on focus.
import { type QueryClient, type UseQueryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ApiProblem, call, type Endpoint, send } from './client';
import type { Answer, BodyOf, GroupName, HeadersOf, ParamsOf, QueryOf, RouteName } from './types';

type Options<T> = Omit<UseQueryOptions<T, ApiProblem>, 'queryKey' | 'queryFn'>;

/** GET a route: `useApi(scores, { query: { tier: 'S' } })`. */
export function useApi<G extends GroupName, R extends RouteName<G>>(
  ep: Endpoint<G, R>,
  request: { params?: ParamsOf<G, R>; query?: QueryOf<G, R> } = {},
  options: Options<Answer<G, R>> = {},
) {
  return useQuery<Answer<G, R>, ApiProblem>({
    queryKey: [ep.method, ep.path, request.params ?? null, request.query ?? null],
    queryFn: ({ signal }) => call(ep, { ...request, signal }),
    ...options,
  });
}

/**
 * GET a route whose answer carries an ETag a later write names as If-Match (an issue's triage): the
 * answer with `etag` beside its fields. Keyed apart from useApi's answer of the same request (the
 * shapes differ), under the same path, so the same prefixes invalidate it.
 */
export function useApiTagged<G extends GroupName, R extends RouteName<G>>(
  ep: Endpoint<G, R>,
  request: { params?: ParamsOf<G, R>; query?: QueryOf<G, R> } = {},
  options: Options<Answer<G, R> & { etag: string | null }> = {},
) {
  return useQuery<Answer<G, R> & { etag: string | null }, ApiProblem>({
    queryKey: [ep.method, ep.path, request.params ?? null, request.query ?? null, 'etag'],
    queryFn: async ({ signal }) => {
      const sent = await send(ep, { ...request, signal });
      return Object.assign({}, sent.data as Answer<G, R>, { etag: sent.headers.get('ETag') });
    },
    ...options,
  });
}

/** POST/PATCH a route; afterwards every cached answer under `invalidates` (path prefixes) is refetched. */
export function useApiMutation<G extends GroupName, R extends RouteName<G>>(ep: Endpoint<G, R>, invalidates: string[] = []) {
  const client = useQueryClient();
  return useMutation<Answer<G, R>, ApiProblem, { params?: ParamsOf<G, R>; query?: QueryOf<G, R>; body?: BodyOf<G, R>; headers?: HeadersOf<G, R> }>({
    mutationFn: (request) => call(ep, request),
    onSuccess: () => invalidatePrefixes(client, invalidates),
  });
}

/** Refetches every cached answer whose path starts with one of `prefixes`. */
export function invalidatePrefixes(client: QueryClient, prefixes: readonly string[]): Promise<void> {
  return client.invalidateQueries({ predicate: (q) => prefixes.some((prefix) => String(q.queryKey[1] ?? '').startsWith(prefix)) });
}
