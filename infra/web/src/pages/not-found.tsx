import { Link, useLocation } from 'react-router';

export default function NotFound() {
  const { pathname } = useLocation();
  return (
    <section>
      <h1>Not found</h1>
      <p>
        The console has no page at <code>{pathname}</code>. <Link to="/">Back to the fleet</Link>
      </p>
    </section>
  );
}
