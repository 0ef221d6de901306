// The frame around every signed-in page: navigation, who is signed in (a link to their account), sign-out,
// and the light/dark switch (the system's choice until the user picks one). On a phone the navigation's 18 links
// (five lines above every page) fold behind a Menu button that names the page shown.
import { tabTitle } from './tab-title';
import { type ReactNode, type RefObject, useEffect, useRef, useState } from 'react';
import { NavLink, useLocation } from 'react-router';
import type { Role } from '../api/types';
import { MAY_LIST_USERS, MAY_READ_AUDIT, MAY_READ_SETTINGS, MAY_SEE_LLM_COST, MAY_SEE_PULLS } from '../api/access';
import { useSession } from '../session';

const NAV: { to: string; label: string; end?: boolean; roles?: readonly Role[] }[] = [
  { to: '/', label: 'Fleet', end: true },
  { to: '/health', label: 'Health' },
  { to: '/risk', label: 'Risk' },
  { to: '/critical', label: 'Critical' },
  { to: '/analysis', label: 'Analysis' },
  { to: '/issues', label: 'Alert issues' },
  { to: '/ai-issues', label: 'AI issues' },
  { to: '/patrol', label: 'Patrol' },
  { to: '/investigations', label: 'Investigations' },
  { to: '/chat', label: 'Chat' },
  { to: '/dashboards', label: 'Dashboards' },
  { to: '/rules', label: 'Rules' },
  { to: '/proposals', label: 'Proposals' },
  { to: '/users', label: 'People', roles: MAY_LIST_USERS },
  { to: '/audit', label: 'Audit', roles: MAY_READ_AUDIT },
  { to: '/metric-sources', label: 'Metric sources', roles: MAY_SEE_PULLS },
  { to: '/settings', label: 'Settings', roles: MAY_READ_SETTINGS },
  { to: '/llm-cost', label: 'LLM cost', roles: MAY_SEE_LLM_COST },
];

type Theme = 'light' | 'dark' | 'system';
const THEME_KEY = 'fleet-health.theme';

function useTheme(): [Theme, (t: Theme) => void] {
  const [theme, setTheme] = useState<Theme>(() => (localStorage.getItem(THEME_KEY) as Theme | null) ?? 'system');
  useEffect(() => {
    if (theme === 'system') document.documentElement.removeAttribute('data-theme');
    else document.documentElement.setAttribute('data-theme', theme);
    localStorage.setItem(THEME_KEY, theme);
  }, [theme]);
  return [theme, setTheme];
}

/**
 * A new page (its path, not a filter of it) is announced as a page load would be: the document's title names its
 * heading (every tab read "Fleet Health"), and keyboard focus moves to the page (it stayed on the link, so a screen
 * reader heard nothing open). Not on the first load, where the browser does that itself.
 */
function usePageArrival(main: RefObject<HTMLElement | null>) {
  const { pathname } = useLocation();
  const first = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the path is the trigger (a new page), not a value read.
  useEffect(() => {
    const el = main.current;
    if (!el) return;
    if (!first.current) el.focus({ preventScroll: true });
    first.current = false;
    // The heading comes with the page's code and data, and may change with them (a cluster's name): followed.
    const title = () => {
      const heading = el.querySelector('h1')?.textContent?.trim();
      const next = tabTitle(heading || undefined);
      if (document.title !== next) document.title = next;
    };
    title();
    const observer = new MutationObserver(title);
    observer.observe(el, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, [pathname, main]);
}

/** The navigation's entry for a path: its own, or the list a detail page belongs to (/issues/123 is "Alert issues"). */
const navEntryOf = (pathname: string) => NAV.find((item) => (item.end ? pathname === item.to : pathname === item.to || pathname.startsWith(`${item.to}/`)));

const ROLE_ARTICLE: Record<Role, string> = { viewer: 'a', admin: 'an', superadmin: 'a' };

export function Shell({ children }: { children: ReactNode }) {
  const { user, signOut, can, roleChange, dismissRoleChange } = useSession();
  const [theme, setTheme] = useTheme();
  const main = useRef<HTMLElement>(null);
  usePageArrival(main);
  const { pathname } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const here = navEntryOf(pathname);
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Fleet Health</span>
        <nav
          aria-label="Main"
          className={menuOpen ? 'open' : undefined}
          // Escape folds the open menu away and gives the focus back to its button.
          onKeyDown={(e) => {
            if (e.key !== 'Escape' || !menuOpen) return;
            setMenuOpen(false);
            menuButton.current?.focus();
          }}
        >
          {/* Shown on a phone only (styles.css); the links are then shown while it is expanded. */}
          <button
            ref={menuButton}
            type="button"
            className="nav-toggle"
            aria-expanded={menuOpen}
            aria-controls="main-nav"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            Menu{here ? <span className="nav-here"> · {here.label}</span> : null}
          </button>
          <ul id="main-nav">
            {NAV.filter((item) => !item.roles || can(...item.roles)).map((item) => (
              <li key={item.to}>
                <NavLink to={item.to} end={item.end} onClick={() => setMenuOpen(false)}>
                  {item.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <div className="account">
          <label>
            <span className="visually-hidden">Theme</span>
            <select value={theme} onChange={(e) => setTheme(e.target.value as Theme)}>
              <option value="system">System theme</option>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
            </select>
          </label>
          <NavLink className="who" to="/account" title={`${user?.email ?? ''}: your account and password`}>
            {user?.name || user?.username} · {user?.role}
          </NavLink>
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1} ref={main}>
        {roleChange && (
          <div className="notice role-change" role="status">
            <p>
              Your role changed from {roleChange.from} to {roleChange.to} while you were signed in: the console now shows what {ROLE_ARTICLE[roleChange.to]}{' '}
              {roleChange.to} may use.
            </p>
            <button type="button" onClick={dismissRoleChange}>
              Dismiss
            </button>
          </div>
        )}
        {children}
      </main>
    </div>
  );
}
