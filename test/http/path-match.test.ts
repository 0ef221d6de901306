import { describe, expect, it } from 'vitest';
import { matchPath, sortBySpecificity } from '../../shared/http/path-match.js';

const routes = sortBySpecificity([
  { method: 'ANY', path: '/api/{proxy+}' },
  { method: 'GET', path: '/api/patrol/{report_id}' },
  { method: 'GET', path: '/api/patrol/latest' },
  { method: 'GET', path: '/api/patrol/kpis/summary' },
  { method: 'GET', path: '/api/issues/{issue_id}/evidence' },
  { method: 'PATCH', path: '/api/issues/{issue_id}' },
  { method: 'GET', path: '/api/issues' },
]);

describe('path matching with API Gateway precedence', () => {
  it('prefers a literal segment over a parameter', () => {
    expect(matchPath(routes, 'GET', '/api/patrol/latest')?.route.path).toBe('/api/patrol/latest');
    expect(matchPath(routes, 'GET', '/api/patrol/r-1')).toEqual({
      route: routes.find((r) => r.path === '/api/patrol/{report_id}'),
      params: { report_id: 'r-1' },
    });
    expect(matchPath(routes, 'GET', '/api/patrol/kpis/summary')?.route.path).toBe('/api/patrol/kpis/summary');
  });

  it('decodes parameters', () => {
    expect(matchPath(routes, 'GET', '/api/issues/a%2Fb%20c/evidence')?.params).toEqual({ issue_id: 'a/b c' });
  });

  it('falls back to the greedy catch-all for unknown paths and other methods', () => {
    expect(matchPath(routes, 'GET', '/api/nothing/here')).toMatchObject({ route: { path: '/api/{proxy+}' }, params: { proxy: 'nothing/here' } });
    expect(matchPath(routes, 'DELETE', '/api/issues')?.route.path).toBe('/api/{proxy+}');
    expect(matchPath(routes, 'OPTIONS', '/api/issues/x')?.route.path).toBe('/api/{proxy+}');
    expect(matchPath(routes, 'PATCH', '/api/issues/x')?.route.path).toBe('/api/issues/{issue_id}');
  });

  it('does not match a prefix or a longer path', () => {
    const exact = sortBySpecificity([{ method: 'GET', path: '/api/issues/{issue_id}' }]);
    expect(matchPath(exact, 'GET', '/api/issues')).toBeNull();
    expect(matchPath(exact, 'GET', '/api/issues/1/2')).toBeNull();
    expect(matchPath(sortBySpecificity([{ method: 'ANY', path: '/api/{proxy+}' }]), 'GET', '/api')).toBeNull();
  });

  it('keeps empty segments as API Gateway does: a trailing slash or an empty parameter matches no route of its own', () => {
    expect(matchPath(routes, 'GET', '/api/issues/')).toMatchObject({ route: { path: '/api/{proxy+}' }, params: { proxy: 'issues/' } });
    expect(matchPath(routes, 'GET', '/api/issues//evidence')).toMatchObject({ route: { path: '/api/{proxy+}' } });
    expect(matchPath(routes, 'PATCH', '/api/issues/')?.route.path).toBe('/api/{proxy+}');
    expect(matchPath(routes, 'GET', '/api//issues')?.route.path).toBe('/api/{proxy+}');
  });
});
