// Data fetching for pages: TanStack Query over the typed endpoints, keyed by the
// route and its request, so pages share answers and refetch on focus.
import { type QueryClient, type UseQueryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef } from 'react';
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

/**
 * POST/PATCH a route; afterwards every cached answer under `invalidates` (path prefixes) is refetched. A request the
 * same as one still in flight is not sent again: it gets that one's answer. A write button is disabled while its
 * write runs (`isPending`), but TanStack Query says so a task later: a quick double click sent the write twice (a
 * triage saved, then refused as changed meanwhile by the same save, its 409 shown beside "Saved").
 */
export function useApiMutation<G extends GroupName, R extends RouteName<G>>(ep: Endpoint<G, R>, invalidates: string[] = []) {
  const client = useQueryClient();
  const inFlight = useRef(new Map<string, Promise<Answer<G, R>>>());
  return useMutation<Answer<G, R>, ApiProblem, { params?: ParamsOf<G, R>; query?: QueryOf<G, R>; body?: BodyOf<G, R>; headers?: HeadersOf<G, R> }>({
    mutationFn: (request) => {
      const key = JSON.stringify(request);
      const sent = inFlight.current.get(key);
      if (sent) return sent;
      const answer = call(ep, request).finally(() => inFlight.current.delete(key));
      inFlight.current.set(key, answer);
      return answer;
    },
    onSuccess: () => invalidatePrefixes(client, invalidates),
  });
}

/** Refetches every cached answer whose path starts with one of `prefixes`. */
export function invalidatePrefixes(client: QueryClient, prefixes: readonly string[]): Promise<void> {
  return client.invalidateQueries({ predicate: (q) => prefixes.some((prefix) => String(q.queryKey[1] ?? '').startsWith(prefix)) });
}
