import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;

// Writes the .class files under a directory into a jar with their class-file version lowered to
// the given major version when it is higher (only the version bytes change). ProGuard 6.2.2 reads
// class files up to Java 13 and so cannot read the JDK 17 modules as library classes; it only
// needs their names, hierarchy and members, which the older version number does not change.
// Used by tests/proguard/accuracy_corpus_test.cc:
//   java DowngradeClasses.java <directory> <out.jar> <major version>
public class DowngradeClasses {
  public static void main(String[] args) throws IOException {
    Path root = Path.of(args[0]);
    int major = Integer.parseInt(args[2]);
    List<Path> classes;
    try (Stream<Path> walk = Files.walk(root)) {
      classes = walk.filter(p -> p.toString().endsWith(".class")).sorted().collect(Collectors.toList());
    }
    try (OutputStream file = Files.newOutputStream(Path.of(args[1]));
        JarOutputStream jar = new JarOutputStream(file)) {
      for (Path path : classes) {
        String name = root.relativize(path).toString().replace('\\', '/');
        if (name.equals("module-info.class")) continue;
        byte[] bytes = Files.readAllBytes(path);
        if (bytes.length > 8 && ((bytes[6] & 0xff) << 8 | (bytes[7] & 0xff)) > major) {
          bytes[4] = 0;
          bytes[5] = 0;
          bytes[6] = (byte) (major >> 8);
          bytes[7] = (byte) major;
        }
        jar.putNextEntry(new JarEntry(name));
        jar.write(bytes);
        jar.closeEntry();
      }
    }
  }
}
