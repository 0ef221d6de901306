// Placeholder until its page is written (this session's work in progress).
export default function Page() {
  return <h1>fleet</h1>;
}
