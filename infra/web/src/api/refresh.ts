// Refresh and recompute runs (issue 21 §2): the route answers 200 with its result when the
// recompute worker finishes within the server's wait, else 202 `running` with a refresh_id;
// the run is then followed at GET <route>/{refresh_id} (202 while running, the same 200 when
// done, 503 when it failed). One hook for every page that starts such a run.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { ApiProblem, type Endpoint, send } from './client';
import { invalidatePrefixes } from './hooks';
import type { Accepted, Answer, GroupName, ParamsOf, RouteName } from './types';

/** How often the follow route is asked, and for how long (the worker's own limit is 300 s; a dead run turns failed after 330 s). */
const FOLLOW_EVERY_MS = 2000;
const FOLLOW_FOR_MS = 6 * 60 * 1000;

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new DOMException('Aborted', 'AbortError'));
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new DOMException('Aborted', 'AbortError'));
      },
      { once: true },
    );
  });

/**
 * Starts a run with `start` (a POST) and, when it answers 202, follows it with `follow`
 * (GET …/{refresh_id}) every 2 s until it answers 200 (the same answer as a direct 200) or
 * fails (503: its problem detail as the error). Polling stops when the component unmounts.
 * `isPending` covers the whole run; `running` is the 202 while the run is followed.
 * Afterwards every cached answer under `invalidates` (path prefixes) is refetched.
 */
export function useRefreshRun<G extends GroupName, R extends RouteName<G>, F extends RouteName<G>>(
  start: Endpoint<G, R>,
  follow: Endpoint<G, F>,
  invalidates: string[] = [],
) {
  const client = useQueryClient();
  const [running, setRunning] = useState<Accepted<G, R> | null>(null);
  const stop = useRef<AbortController | null>(null);
  useEffect(() => () => stop.current?.abort(), []);

  const mutation = useMutation<Answer<G, R>, ApiProblem, void>({
    mutationFn: async () => {
      stop.current?.abort();
      const controller = new AbortController();
      stop.current = controller;
      setRunning(null);
      try {
        let answer = await send(start);
        if (answer.status !== 202) return answer.data as Answer<G, R>;
        const { refresh_id } = answer.data as { refresh_id: string };
        setRunning(answer.data as Accepted<G, R>);
        const deadline = Date.now() + FOLLOW_FOR_MS;
        while (Date.now() < deadline) {
          await pause(FOLLOW_EVERY_MS, controller.signal);
          const followed = await send(follow, { params: { refresh_id } as ParamsOf<G, F>, signal: controller.signal });
          if (followed.status !== 202) return followed.data as unknown as Answer<G, R>;
          answer = followed as typeof answer;
        }
        throw new ApiProblem(
          202,
          'Still running',
          `The refresh has been running for more than ${FOLLOW_FOR_MS / 60_000} minutes; reload the page later to see its result.`,
          answer.data as Record<string, unknown>,
        );
      } finally {
        if (!controller.signal.aborted) setRunning(null);
      }
    },
    onSuccess: () => invalidatePrefixes(client, invalidates),
  });
  return { ...mutation, running };
}
