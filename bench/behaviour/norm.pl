#!/usr/bin/perl
# norm.pl [--squeeze]: normalise r3fuzz output read from stdin (see run-battery.sh).
# With file arguments after --files: print each file (sorted, recursively for directories),
# text as is and binary as hex, then normalise the whole.
use strict; use warnings;
use File::Find;
my $squeeze = 0; my @paths; my $files = 0;
for my $a (@ARGV) {
  if ($a eq '--squeeze') { $squeeze = 1 } elsif ($a eq '--files') { $files = 1 } else { push @paths, $a }
}
my $text = '';
if ($files) {
  for my $p (@paths) {
    $text .= "\n=== files under $p\n";
    if (!-e $p) { $text .= "(absent)\n"; next; }
    my @list;
    if (-d $p) { find({ wanted => sub { push @list, $File::Find::name if -f $_ }, no_chdir => 1 }, $p); }
    else { @list = ($p); }
    for my $f (sort @list) {
      open(my $fh, '<:raw', $f) or do { $text .= "\n--- file $f (unreadable: $!)\n"; next; };
      local $/; my $c = <$fh>; $c = '' unless defined $c; close $fh;
      if ($f =~ /\.bin$/ || $c =~ /[^\t\n\r\x20-\x7e]/) {
        $text .= "\n--- file $f (binary, " . length($c) . " bytes)\n";
        my @b = unpack('C*', $c);
        while (my @row = splice(@b, 0, 16)) { $text .= join(' ', map { sprintf '%02x', $_ } @row) . "\n"; }
      } else {
        $text .= "\n--- file $f\n$c";
      }
    }
  }
} else {
  local $/; $text = <STDIN>; $text = '' unless defined $text;
}
my $num = qr/-?[0-9.]+(?:[eE][-+]?[0-9]+)?/;
my $dur = qr/[0-9]+(?:\.[0-9]+)?(?:ns|us|ms|s|min|h)/;
for ($text) {
  s/\Q$ENV{NORM_TMP_ABS}\E/\$TMP/g;
  s/\Q$ENV{NORM_TMP_REL}\E/\$TMP/g;
  s/\Q$ENV{NORM_BIN}\E/r3fuzz/g;
  # exhaust: "N cases checked (0.08s, 220879 cases/s)" and "(N cases checked, 0.01s, 258672 cases/s)"
  s/(\d+ cases checked(?: \(|, ))[0-9.]+s, [0-9.]+ cases\/s\)/${1}T s, T cases\/s)/g;
  # shrink: "N reductions, 0.00 s"
  s/(\d+ reductions), [0-9.]+ s\b/$1, T s/g;
  # JUnit
  s/\btime="[^"]*"/time="T"/g;
  # mutants --json
  s/("seconds":\s*)$num/$1"T"/g;
  s/("seconds":\s*\{\s*"median":\s*)$num(,\s*"worst":\s*)$num/$1"T"$2"T"/g;
  # mutants text and markdown: time columns "670us / 1.1ms"
  s/\b$dur \/ $dur\b/T \/ T/g;
  if ($squeeze) { s/ {2,}/  /g; }
}
print $text;
