// What a settings section receives: the one type every section file imports. It lives apart from
// the registry (sections.ts, which imports every section lazily), so that no section imports the
// registry and the sections form no import ring.
export interface SectionProps {
  /** The address after /settings/<id>/, split at '/' (empty on the section's own page). */
  path: string[];
}
