// Not used by the renderer yet: allow dead code until the output module calls them.
#[allow(dead_code)]
mod duration;
#[allow(dead_code)]
mod tabwriter;

fn main() {}
