//! The blocks that render from stored knowledge: memory and the skills catalog
//! (docs/design.md, "Blocks"), and the runtime block of the seed-003 layout.

use uuid::Uuid;

use crate::fields::Callable;
use crate::rows::{Memory, Skill};

pub(crate) const MEMORY_HEADER: &str = "Memory available now.";
pub(crate) const SKILLS_HEADER: &str = "Skills available now.";
pub(crate) const RUNTIME_HEADER: &str = "Runtime context.";
/// The catalog's bound, header and omission line included.
pub(crate) const SKILL_CATALOG_BOUND: usize = 16 * 1024;

/// Whose memory and skills a turn may read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bindings {
    /// The answerer A.
    pub(crate) agent: Uuid,
    pub(crate) workspace: Uuid,
    /// The poster P (the speaker of the (A, P) pair).
    pub(crate) speaker: Option<Uuid>,
    /// A Human the turn explicitly selects for `user` memory and skills.
    pub(crate) selected_human: Option<Uuid>,
    pub(crate) conversation: Uuid,
}

const SCOPES: [&str; 5] = ["agent", "workspace", "speaker", "user", "conversation"];

fn scope_rank(scope: &str) -> usize {
    SCOPES.iter().position(|s| *s == scope).unwrap_or(SCOPES.len())
}

impl Bindings {
    pub(crate) fn binds_memory(&self, m: &Memory) -> bool {
        match m.scope.as_str() {
            "agent" => m.user_id == Some(self.agent),
            "workspace" => m.workspace_id == Some(self.workspace),
            "speaker" => m.user_id == Some(self.agent) && self.speaker.is_some() && m.speaker_id == self.speaker,
            "user" => self.selected_human.is_some() && m.user_id == self.selected_human,
            "conversation" => m.conversation_id == Some(self.conversation),
            _ => false,
        }
    }
}

/// The memory block's text, or `None` when no entry is bound.
pub(crate) fn memory(memories: &[Memory], b: &Bindings) -> crate::error::Result<Option<(String, Vec<Uuid>)>> {
    let mut bound: Vec<&Memory> = memories
        .iter()
        .filter(|m| b.binds_memory(m) && !m.path.starts_with("skills/"))
        .collect();
    if bound.is_empty() {
        return Ok(None);
    }
    let size = bound
        .iter()
        .map(|m| m.scope.len() + m.path.len() + m.body.len() + 6)
        .fold(MEMORY_HEADER.len(), usize::saturating_add);
    crate::bounds::check(size, "the memory block")?;
    bound.sort_by(|x, y| {
        scope_rank(&x.scope)
            .cmp(&scope_rank(&y.scope))
            .then_with(|| x.path.cmp(&y.path))
    });
    let mut text = String::from(MEMORY_HEADER);
    for m in &bound {
        text.push_str("\n\n### ");
        text.push_str(&m.scope);
        text.push('/');
        text.push_str(&m.path);
        text.push('\n');
        text.push_str(&m.body);
    }
    Ok(Some((text, bound.iter().map(|m| m.id).collect())))
}

/// The sources a non-runner callable resolves, in order.
fn source_matches(source: &str, s: &Skill, b: &Bindings, application: Option<&str>) -> bool {
    s.source == source
        && match source {
            "application" => application.is_some() && s.application.as_deref() == application,
            "agent" => s.user_id == Some(b.agent),
            "workspace" => s.workspace_id == Some(b.workspace),
            "speaker" => s.user_id == Some(b.agent) && b.speaker.is_some() && s.speaker_id == b.speaker,
            "user" => b.selected_human.is_some() && s.user_id == b.selected_human,
            _ => false,
        }
}

fn line(callable: &str, s: &Skill) -> String {
    let description = s.description.replace(['\r', '\n'], " ");
    match s.executor_id {
        Some(e) => format!("- {callable} / {} [{e}]: {description}", s.name),
        None => format!("- {callable} / {}: {description}", s.name),
    }
}

/// Kernel memory skills: the bound memory rows under `skills/` (agent, workspace,
/// speaker and user scopes) as catalog entries of their scope's source. The name is
/// the path after `skills/` without a `.md` ending; the description is the body's first
/// non-empty line. They carry no executor id (the seed lists them without a UUID).
pub(crate) fn memory_skills(memories: &[Memory], b: &Bindings) -> Vec<Skill> {
    memories
        .iter()
        .filter(|m| matches!(m.scope.as_str(), "agent" | "workspace" | "speaker" | "user"))
        .filter(|m| b.binds_memory(m))
        .filter_map(|m| {
            let name = m.path.strip_prefix("skills/")?;
            let name = name.strip_suffix(".md").unwrap_or(name);
            let description = m.body.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
            let mut s = Skill::new(m.id, &m.scope, name, description);
            s.user_id = m.user_id;
            s.speaker_id = m.speaker_id;
            s.workspace_id = m.workspace_id;
            (!name.is_empty()).then_some(s)
        })
        .collect()
}

/// One source of a callable's skills, tried in order (first source wins per name).
type Pick<'a> = Box<dyn Fn(&Skill) -> bool + 'a>;

/// The catalog's lines, before the bound.
pub(crate) fn catalog_lines(
    skills: &[Skill],
    callables: &[Callable],
    b: &Bindings,
    application: Option<&str>,
) -> Vec<String> {
    resolve(skills, callables, b, application, false)
        .into_iter()
        .map(|(callable, s)| line(callable, s))
        .collect()
}

/// The skills each callable resolves to, in catalog order: a runner callable its
/// runner's, any other the application's, the agent's, the workspace's, the speaker
/// pair's and the selected Human's, by name within a source, the first source winning a
/// name. With `recall_only`, the callable's recall-only skills follow (those whose
/// name no listed skill of the callable took): the complete set a skill_view reads.
pub(crate) fn resolve<'s>(
    skills: &'s [Skill],
    callables: &'s [Callable],
    b: &Bindings,
    application: Option<&str>,
    recall_only: bool,
) -> Vec<(&'s str, &'s Skill)> {
    let mut out = Vec::new();
    for c in callables {
        // A runner callable lists that runner's skills; any other resolves the sources in order.
        let groups: Vec<Pick<'_>> = match &c.runner {
            Some(runner) => vec![Box::new(move |s: &Skill| {
                s.source == "runner" && s.runner.as_deref() == Some(runner.as_str())
            })],
            None => ["application", "agent", "workspace", "speaker", "user"]
                .into_iter()
                .map(|source| Box::new(move |s: &Skill| source_matches(source, s, b, application)) as Pick<'_>)
                .collect(),
        };
        let mut listed: Vec<&str> = Vec::new();
        let passes: &[bool] = if recall_only { &[false, true] } else { &[false] };
        for &recall in passes {
            for pick in &groups {
                let mut found: Vec<&Skill> = skills.iter().filter(|s| s.recall_only == recall && pick(s)).collect();
                found.sort_by(|x, y| x.name.cmp(&y.name));
                for s in found {
                    if listed.contains(&s.name.as_str()) {
                        continue;
                    }
                    listed.push(&s.name);
                    out.push((c.name.as_str(), s));
                }
            }
        }
    }
    out
}

/// The catalog text within its bound, or `None` when it lists nothing.
pub(crate) fn catalog(lines: &[String]) -> Option<String> {
    if lines.is_empty() {
        return None;
    }
    let mut text = String::from(SKILLS_HEADER);
    let full: usize = text.len() + lines.iter().map(|l| l.len() + 1).sum::<usize>();
    if full <= SKILL_CATALOG_BOUND {
        for l in lines {
            text.push('\n');
            text.push_str(l);
        }
        return Some(text);
    }
    // Keep the longest prefix of lines that leaves room for the omission line.
    let mut kept = 0;
    let mut len = text.len();
    for (i, l) in lines.iter().enumerate() {
        let omitted = lines.len() - i - 1;
        let tail = format!("\n({omitted} more skills omitted)").len();
        if len + 1 + l.len() + if omitted > 0 { tail } else { 0 } > SKILL_CATALOG_BOUND {
            break;
        }
        len += 1 + l.len();
        kept = i + 1;
    }
    for l in &lines[..kept] {
        text.push('\n');
        text.push_str(l);
    }
    text.push_str(&format!("\n({} more skills omitted)", lines.len() - kept));
    Some(text)
}

/// The runtime block: the origin channel, the workspace's paths (seed 003, when it has
/// any), the workspace timezone, the turn's tools.
pub(crate) fn runtime(origin_channel: Option<&str>, paths: &[String], timezone: &str, tools: &[String]) -> String {
    let mut text = String::from(RUNTIME_HEADER);
    if let Some(c) = origin_channel.filter(|c| !c.is_empty()) {
        text.push_str("\nOrigin channel: ");
        text.push_str(c);
    }
    if !paths.is_empty() {
        text.push_str("\nWorkspace paths: ");
        text.push_str(&paths.join(", "));
    }
    text.push_str("\nTimezone: ");
    text.push_str(timezone);
    if !tools.is_empty() {
        text.push_str("\nTools: ");
        text.push_str(&tools.join(", "));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    /// A fresh id for a test row.
    fn fresh() -> Uuid {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0x1000);
        id(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed).into())
    }

    fn b() -> Bindings {
        Bindings {
            agent: id(1),
            workspace: id(2),
            speaker: Some(id(3)),
            selected_human: None,
            conversation: id(4),
        }
    }

    fn mem(scope: &str, path: &str, owner: (Option<u128>, Option<u128>, Option<u128>, Option<u128>)) -> Memory {
        Memory {
            id: fresh(),
            scope: scope.into(),
            user_id: owner.0.map(id),
            speaker_id: owner.1.map(id),
            workspace_id: owner.2.map(id),
            conversation_id: owner.3.map(id),
            path: path.into(),
            body: format!("body of {path}"),
            updated_at: String::new(),
        }
    }

    #[test]
    fn memory_renders_bound_entries_in_scope_then_path_order() {
        let ms = vec![
            mem("conversation", "c", (None, None, None, Some(4))),
            mem("workspace", "b", (None, None, Some(2), None)),
            mem("agent", "z", (Some(1), None, None, None)),
            mem("agent", "a", (Some(1), None, None, None)),
            mem("agent", "skills/x", (Some(1), None, None, None)),
            mem("agent", "other", (Some(9), None, None, None)),
            mem("speaker", "s", (Some(1), Some(3), None, None)),
            mem("speaker", "s2", (Some(1), Some(8), None, None)),
            mem("user", "u", (Some(3), None, None, None)),
        ];
        let (text, ids) = memory(&ms, &b()).unwrap().unwrap();
        assert_eq!(
            text,
            "Memory available now.\n\n### agent/a\nbody of a\n\n### agent/z\nbody of z\n\n### workspace/b\nbody of b\n\n### speaker/s\nbody of s\n\n### conversation/c\nbody of c"
        );
        assert_eq!(ids.len(), 5);
        let with_user = Bindings {
            selected_human: Some(id(3)),
            ..b()
        };
        assert!(memory(&ms, &with_user).unwrap().unwrap().0.contains("### user/u"));
        assert!(memory(&[], &b()).unwrap().is_none());
    }

    fn skill(source: &str, name: &str, f: impl FnOnce(&mut Skill)) -> Skill {
        let mut s = Skill::new(fresh(), source, name, &format!("does {name} ({source})"));
        f(&mut s);
        s
    }

    #[test]
    fn catalog_resolves_sources_in_order_first_wins() {
        let skills = vec![
            skill("workspace", "deploy", |s| s.workspace_id = Some(id(2))),
            skill("agent", "deploy", |s| s.user_id = Some(id(1))),
            skill("agent", "audit", |s| {
                s.user_id = Some(id(1));
                s.executor_id = Some(id(7));
            }),
            skill("application", "zeta", |s| s.application = Some("crm".into())),
            skill("agent", "secret", |s| {
                s.user_id = Some(id(1));
                s.recall_only = true;
            }),
            skill("runner", "lint", |s| s.runner = Some("ci".into())),
            skill("runner", "build", |s| s.runner = Some("ci".into())),
            skill("runner", "other", |s| s.runner = Some("cd".into())),
        ];
        let callables = vec![
            Callable {
                name: "skill".into(),
                runner: None,
                deferred: false,
            },
            Callable {
                name: "ci".into(),
                runner: Some("ci".into()),
                deferred: false,
            },
        ];
        let lines = catalog_lines(&skills, &callables, &b(), Some("crm"));
        assert_eq!(
            lines,
            vec![
                "- skill / zeta: does zeta (application)".to_string(),
                format!("- skill / audit [{}]: does audit (agent)", id(7)),
                "- skill / deploy: does deploy (agent)".to_string(),
                "- ci / build: does build (runner)".to_string(),
                "- ci / lint: does lint (runner)".to_string(),
            ]
        );
        assert!(catalog(&lines)
            .unwrap()
            .starts_with("Skills available now.\n- skill / zeta: does zeta (application)\n"));
        assert!(catalog(&[]).is_none());
    }

    #[test]
    fn catalog_is_bounded_with_an_omission_count() {
        let lines: Vec<String> = (0..400)
            .map(|i| format!("- skill / s{i:03}: {}", "d".repeat(80)))
            .collect();
        let text = catalog(&lines).unwrap();
        assert!(text.len() <= SKILL_CATALOG_BOUND, "{}", text.len());
        let listed = text.lines().filter(|l| l.starts_with("- ")).count();
        assert!(text.ends_with(&format!("\n({} more skills omitted)", 400 - listed)));
        assert!(listed > 100);
        // One more line would not have fit.
        let next = text.len() + lines[listed].len() + 1;
        assert!(next > SKILL_CATALOG_BOUND - 5);
    }

    #[test]
    fn runtime_lists_channel_timezone_tools() {
        assert_eq!(
            runtime(Some("lark"), &[], "Asia/Shanghai", &["read".into(), "bash".into()]),
            "Runtime context.\nOrigin channel: lark\nTimezone: Asia/Shanghai\nTools: read, bash"
        );
        assert_eq!(runtime(None, &[], "UTC", &[]), "Runtime context.\nTimezone: UTC");
        assert_eq!(
            runtime(Some("lark"), &["/srv/app".into(), "/data".into()], "UTC", &[]),
            "Runtime context.\nOrigin channel: lark\nWorkspace paths: /srv/app, /data\nTimezone: UTC"
        );
    }
}
