//! Where a run's outputs go, checked before anything is read or written: no
//! output onto an input, no two onto one file, at most one onto stdout.

use std::path::{Path, PathBuf};

use super::OptionsError;

/// Where one output of a run goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink<'p> {
    Stdout,
    /// A file; one named `-` too, for a flag that does not read `-` as
    /// stdout (`--write-policy -` writes the file `-`).
    File(&'p Path),
}

impl<'p> Sink<'p> {
    /// The file a flag names, or stdout for `-` (`-o -`, `--export-json -`).
    pub fn dash_is_stdout(path: &'p Path) -> Self {
        match path.as_os_str() == "-" {
            true => Sink::Stdout,
            false => Sink::File(path),
        }
    }

    /// Where the report goes: stdout, unless `-o` names a file.
    pub fn report(output: Option<&'p Path>) -> Self {
        output.map_or(Sink::Stdout, Sink::dash_is_stdout)
    }
}

/// Refuses an output file that is one of the `inputs` (the logs, or the
/// table read in their place: one mistyped `-o` would replace it), two
/// outputs to one file (the last one written would replace the others), and
/// two outputs to stdout (one after the other, neither could be read).
/// `outputs` pairs each flag with where it writes, if anywhere. An input `-`
/// is stdin, not a file.
pub fn check_outputs<'p>(
    inputs: impl IntoIterator<Item = &'p PathBuf>,
    outputs: &[(&str, Option<Sink>)],
) -> Result<(), OptionsError> {
    let inputs: Vec<(&PathBuf, PathBuf)> = (inputs.into_iter())
        .filter(|input| input.as_os_str() != "-")
        .map(|input| (input, resolved(input)))
        .collect();
    let files: Vec<(&str, PathBuf)> = (outputs.iter())
        .filter_map(|&(flag, sink)| match sink {
            Some(Sink::File(path)) => Some((flag, resolved(path))),
            _ => None,
        })
        .collect();
    for (i, (flag, file)) in files.iter().enumerate() {
        if let Some((input, _)) = inputs.iter().find(|(_, resolved)| resolved == file) {
            return Err(OptionsError::Usage(format!(
                "{flag} {} is an input of this run; writing there would replace it. Give another file name",
                input.display()
            )));
        }
        if let Some((other, _)) = files[..i].iter().find(|(_, f)| f == file) {
            return Err(OptionsError::Usage(format!(
                "{other} and {flag} name the same file ({}); give each output its own file",
                file.display()
            )));
        }
    }
    let mut to_stdout = (outputs.iter()).filter(|(_, sink)| *sink == Some(Sink::Stdout));
    if let (Some((first, _)), Some((second, _))) = (to_stdout.next(), to_stdout.next()) {
        return Err(OptionsError::Usage(format!(
            "{first} and {second} both go to stdout: only one output can go to stdout; give the others a file name"
        )));
    }
    Ok(())
}

/// `path` as the file system resolves it (its folder resolved when the file
/// does not exist yet), so that two spellings of one file compare equal.
fn resolved(path: &Path) -> PathBuf {
    if let Ok(full) = path.canonicalize() {
        return full;
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match (folder.canonicalize(), path.file_name()) {
        (Ok(folder), Some(name)) => folder.join(name),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_output_at_most_goes_to_stdout_and_a_file_named_dash_is_a_file() {
        let dash = Path::new("-");
        let file = Path::new("out.json");
        let inputs = [PathBuf::from("-")];
        let check = |outputs: &[(&str, Option<Sink>)]| {
            check_outputs(&inputs, outputs).map_err(|e| e.to_string())
        };
        // Found by users: `report --export-json -` beside the report on
        // stdout kept only the JSON.
        let refused = check(&[
            ("the report", Some(Sink::report(None))),
            ("--export-json", Some(Sink::dash_is_stdout(dash))),
        ])
        .unwrap_err();
        assert!(
            refused.starts_with("the report and --export-json both go to stdout"),
            "{refused}"
        );
        assert!(
            check(&[
                ("--output", Some(Sink::report(Some(dash)))),
                ("--export-html", Some(Sink::dash_is_stdout(dash))),
            ])
            .is_err()
        );
        assert!(
            check(&[
                ("--output", Some(Sink::report(Some(file)))),
                ("--export-json", Some(Sink::dash_is_stdout(dash))),
                ("--export-html", None),
            ])
            .is_ok()
        );
        // `--write-policy -` writes the file `-`, so two such outputs clash;
        // an input `-` is stdin, not that file.
        let both = check(&[
            ("--output", Some(Sink::report(None))),
            ("--write-policy", Some(Sink::File(dash))),
            ("--write-routes", Some(Sink::File(dash))),
        ])
        .unwrap_err();
        assert!(
            both.starts_with("--write-policy and --write-routes name the same file"),
            "{both}"
        );
        assert!(check(&[("--write-policy", Some(Sink::File(dash)))]).is_ok());
    }
}
