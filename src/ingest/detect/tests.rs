use super::*;

fn named(name: &str) -> Option<FormatChoice> {
    Some(FormatChoice::Source(formats::named(name).unwrap()))
}

#[test]
fn detects_each_family() {
    let combined =
        br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326 "-" "curl/8""#;
    assert_eq!(detect(combined), Some(FormatChoice::Combined));
    let common = br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326"#;
    assert_eq!(detect(common), Some(FormatChoice::Common));
    let json = b"{\"ts\":1,\"path\":\"/\"}\n\n{\"ts\":2}\n";
    assert_eq!(detect(json), Some(FormatChoice::Json));
    let caddy = b"caddy  | {\"level\":\"info\",\"ts\":1.5}\n";
    assert_eq!(detect(caddy), Some(FormatChoice::Json));
}

#[test]
fn nothing_fits() {
    assert_eq!(detect(b"hello world\nfoo\n"), None);
    assert_eq!(detect(b"\n\n"), None);
}

#[test]
fn a_minority_of_bad_lines_does_not_spoil_detection() {
    let text = b"garbage\n1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\" \"a\"\n1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\" \"a\"\n";
    assert_eq!(detect(text), Some(FormatChoice::Combined));
}

#[test]
fn vhost_combined_is_told_from_address_lists() {
    let vhost = b"www.example.com:443 192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1 \"-\" \"a\"\r\n";
    assert_eq!(detect(vhost), named("vhost_combined"));
    let list = b"10.0.0.2, 10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1 \"-\" \"a\"\n";
    assert_eq!(detect(list), Some(FormatChoice::Combined));
    let quoted_list = b"\"10.5.102.222, 199.96.1.1\" 10.2.1.185 - - [22/Jan/2016:13:18:29 +0000] \"GET / HTTP/1.1\" 200 2 \"-\" \"a\"\n";
    assert_eq!(detect(quoted_list), Some(FormatChoice::Combined));
}
