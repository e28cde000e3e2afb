"""Prose in every language the container image ships OCR data for, for ``bench/corpora/ocr_corpus.py``.

Each language has a few paragraphs of plain encyclopaedic prose written for this benchmark (a
river, a city, science, history, daily life), in the language's usual script and spelling, with
its own punctuation. ``SCRIPTS`` says which script each is written in and ``SPACED`` which ones
separate words with spaces (the others are scored by characters). Nothing here is copied from a
copyrighted text.
"""

from __future__ import annotations

from typing import Final

__all__ = ["FONTS", "SCRIPTS", "SPACED", "TEXTS"]

TEXTS: Final[dict[str, str]] = {
    "eng": (
        "The river rises in the hills north of the town and flows south for about two hundred "
        "kilometres before it reaches the sea. Its valley has been farmed since the Bronze Age, and "
        "the remains of several early settlements were found along its banks. In the nineteenth "
        "century the river was used to carry coal and timber to the harbour, and a canal was built "
        "to avoid the shallow rapids near the old mill. Today the towpath is a popular route for "
        "walkers and cyclists. The town library holds letters, maps and photographs that show how "
        "the landscape changed over the last two centuries. Scientists measure the water quality "
        "every month, and the number of fish has grown steadily since the factories closed."
    ),
    "deu": (
        "Der Fluss entspringt in den Hügeln nördlich der Stadt und fließt etwa zweihundert Kilometer "
        "nach Süden, bevor er das Meer erreicht. Sein Tal wird seit der Bronzezeit landwirtschaftlich "
        "genutzt, und an seinen Ufern wurden die Reste mehrerer früher Siedlungen gefunden. Im "
        "neunzehnten Jahrhundert diente der Fluss dem Transport von Kohle und Holz zum Hafen, und "
        "ein Kanal wurde gebaut, um die flachen Stromschnellen bei der alten Mühle zu umgehen. Heute "
        "ist der Treidelpfad ein beliebter Weg für Wanderer und Radfahrer. Die Stadtbibliothek "
        "bewahrt Briefe, Karten und Fotografien auf, die zeigen, wie sich die Landschaft in den "
        "letzten zwei Jahrhunderten verändert hat. Größere Schäden gab es während des Hochwassers "
        "im Frühjahr, als die Straßen über eine Woche lang überflutet waren."
    ),
    "fra": (
        "La rivière prend sa source dans les collines au nord de la ville et coule vers le sud sur "
        "environ deux cents kilomètres avant d'atteindre la mer. Sa vallée est cultivée depuis l'âge "
        "du bronze, et les vestiges de plusieurs villages anciens ont été découverts le long de ses "
        "rives. Au dix-neuvième siècle, la rivière servait à transporter le charbon et le bois "
        "jusqu'au port, et un canal fut creusé pour éviter les rapides près du vieux moulin. "
        "Aujourd'hui, le chemin de halage est très fréquenté par les promeneurs et les cyclistes. La "
        "bibliothèque municipale conserve des lettres, des cartes et des photographies qui montrent "
        "comment le paysage a changé. Les élèves du collège étudient chaque année la qualité de "
        "l'eau, et leurs résultats sont présentés à la mairie."
    ),
    "spa": (
        "El río nace en las colinas situadas al norte de la ciudad y recorre unos doscientos "
        "kilómetros hacia el sur antes de desembocar en el mar. Su valle se cultiva desde la Edad "
        "del Bronce, y en sus orillas se encontraron los restos de varios asentamientos antiguos. En "
        "el siglo diecinueve el río se utilizaba para llevar carbón y madera hasta el puerto, y se "
        "construyó un canal para evitar los rápidos cercanos al viejo molino. Hoy el camino de "
        "sirga es una ruta muy popular entre excursionistas y ciclistas. La biblioteca municipal "
        "guarda cartas, mapas y fotografías que muestran cómo cambió el paisaje durante los últimos "
        "dos siglos. Los científicos miden la calidad del agua cada mes, y el número de peces ha "
        "aumentado desde que cerraron las fábricas."
    ),
    "por": (
        "O rio nasce nas colinas ao norte da cidade e corre para o sul por cerca de duzentos "
        "quilômetros antes de chegar ao mar. O seu vale é cultivado desde a Idade do Bronze, e "
        "foram encontrados vestígios de várias povoações antigas ao longo das suas margens. No "
        "século dezenove, o rio era usado para transportar carvão e madeira até o porto, e "
        "construiu-se um canal para evitar as corredeiras perto do velho moinho. Hoje, o caminho "
        "junto à margem é muito procurado por caminhantes e ciclistas. A biblioteca municipal "
        "guarda cartas, mapas e fotografias que mostram como a paisagem mudou nos últimos dois "
        "séculos. Os cientistas medem a qualidade da água todos os meses, e a população de peixes "
        "cresceu desde que as fábricas fecharam."
    ),
    "ita": (
        "Il fiume nasce sulle colline a nord della città e scorre verso sud per circa duecento "
        "chilometri prima di raggiungere il mare. La sua valle è coltivata fin dall'età del bronzo, "
        "e lungo le sue rive sono stati trovati i resti di diversi insediamenti antichi. Nel "
        "diciannovesimo secolo il fiume serviva a trasportare carbone e legname fino al porto, e fu "
        "costruito un canale per evitare le rapide vicino al vecchio mulino. Oggi l'alzaia è un "
        "percorso molto amato da escursionisti e ciclisti. La biblioteca comunale conserva lettere, "
        "mappe e fotografie che mostrano come è cambiato il paesaggio negli ultimi due secoli. Gli "
        "scienziati misurano ogni mese la qualità dell'acqua, e il numero dei pesci è cresciuto da "
        "quando le fabbriche hanno chiuso."
    ),
    "nld": (
        "De rivier ontspringt in de heuvels ten noorden van de stad en stroomt ongeveer tweehonderd "
        "kilometer naar het zuiden voordat zij de zee bereikt. Het dal wordt al sinds de bronstijd "
        "bewerkt, en langs de oevers zijn de resten van verscheidene vroege nederzettingen gevonden. "
        "In de negentiende eeuw werd de rivier gebruikt om steenkool en hout naar de haven te "
        "vervoeren, en er werd een kanaal gegraven om de ondiepe stroomversnellingen bij de oude "
        "molen te vermijden. Tegenwoordig is het jaagpad een geliefde route voor wandelaars en "
        "fietsers. De stadsbibliotheek bewaart brieven, kaarten en foto's die laten zien hoe het "
        "landschap in de laatste twee eeuwen is veranderd. Wetenschappers meten elke maand de "
        "kwaliteit van het water."
    ),
    "pol": (
        "Rzeka bierze początek na wzgórzach na północ od miasta i płynie na południe przez około "
        "dwieście kilometrów, zanim dotrze do morza. Jej dolina jest uprawiana od epoki brązu, a na "
        "brzegach odnaleziono pozostałości kilku wczesnych osad. W dziewiętnastym wieku rzeką "
        "przewożono węgiel i drewno do portu, a w pobliżu starego młyna zbudowano kanał, aby ominąć "
        "płytkie bystrza. Dziś ścieżka wzdłuż brzegu jest ulubioną trasą pieszych i rowerzystów. "
        "Biblioteka miejska przechowuje listy, mapy i fotografie, które pokazują, jak zmieniał się "
        "krajobraz w ciągu ostatnich dwóch stuleci. Naukowcy co miesiąc mierzą jakość wody, a "
        "liczba ryb systematycznie rośnie od czasu zamknięcia fabryk. Żółte łąki kwitną wczesnym "
        "latem."
    ),
    "ces": (
        "Řeka pramení v kopcích severně od města a teče asi dvě stě kilometrů na jih, než dosáhne "
        "moře. Její údolí se obdělává už od doby bronzové a na jejích březích byly nalezeny "
        "pozůstatky několika raných osad. V devatenáctém století se po řece dopravovalo uhlí a "
        "dřevo do přístavu a u starého mlýna byl postaven kanál, aby se lodě vyhnuly mělkým "
        "peřejím. Dnes je stezka podél břehu oblíbenou trasou chodců i cyklistů. Městská knihovna "
        "uchovává dopisy, mapy a fotografie, které ukazují, jak se krajina během posledních dvou "
        "staletí měnila. Vědci každý měsíc měří kvalitu vody a počet ryb od uzavření továren "
        "stále roste. Příliš žluťoučký kůň úpěl ďábelské ódy."
    ),
    "swe": (
        "Floden rinner upp i kullarna norr om staden och flyter omkring tvåhundra kilometer söderut "
        "innan den når havet. Dalen har odlats sedan bronsåldern, och längs stränderna har man "
        "hittat lämningar efter flera tidiga boplatser. Under artonhundratalet användes floden för "
        "att frakta kol och timmer till hamnen, och en kanal byggdes för att undvika forsarna vid "
        "den gamla kvarnen. I dag är dragvägen längs stranden en omtyckt led för vandrare och "
        "cyklister. Stadsbiblioteket förvarar brev, kartor och fotografier som visar hur "
        "landskapet har förändrats under de senaste två århundradena. Forskare mäter vattnets "
        "kvalitet varje månad, och antalet fiskar har ökat sedan fabrikerna stängdes."
    ),
    "tur": (
        "Nehir, şehrin kuzeyindeki tepelerden doğar ve denize ulaşmadan önce yaklaşık iki yüz "
        "kilometre boyunca güneye akar. Vadisinde Tunç Çağı'ndan beri tarım yapılmaktadır ve "
        "kıyılarında birkaç eski yerleşimin kalıntıları bulunmuştur. On dokuzuncu yüzyılda nehir, "
        "kömür ve keresteyi limana taşımak için kullanılıyordu; eski değirmenin yakınındaki sığ "
        "akıntılardan kaçınmak için bir kanal inşa edildi. Bugün kıyı boyunca uzanan yol, "
        "yürüyüşçüler ve bisikletliler için sevilen bir güzergâhtır. Şehir kütüphanesi, son iki "
        "yüzyılda manzaranın nasıl değiştiğini gösteren mektupları, haritaları ve fotoğrafları "
        "saklar. Bilim insanları her ay suyun kalitesini ölçer ve fabrikalar kapandığından beri "
        "balık sayısı düzenli olarak artmaktadır."
    ),
    "rus": (
        "Река берёт начало в холмах к северу от города и течёт на юг около двухсот километров, "
        "прежде чем впасть в море. Её долину возделывают со времён бронзового века, а на берегах "
        "были найдены остатки нескольких древних поселений. В девятнадцатом веке по реке возили "
        "уголь и лес в порт, и возле старой мельницы был построен канал, чтобы обойти мелкие "
        "пороги. Сегодня тропа вдоль берега стала любимым маршрутом пешеходов и велосипедистов. "
        "Городская библиотека хранит письма, карты и фотографии, которые показывают, как менялся "
        "пейзаж за последние два столетия. Учёные каждый месяц измеряют качество воды, и "
        "количество рыбы постоянно растёт с тех пор, как закрылись фабрики."
    ),
    "ukr": (
        "Річка бере початок на пагорбах на північ від міста і тече на південь близько двохсот "
        "кілометрів, перш ніж впадає в море. Її долину обробляють ще з бронзової доби, а на берегах "
        "знайдено рештки кількох давніх поселень. У дев'ятнадцятому столітті річкою перевозили "
        "вугілля та деревину до порту, а біля старого млина збудували канал, щоб оминути мілкі "
        "пороги. Сьогодні стежка вздовж берега є улюбленим маршрутом пішоходів і велосипедистів. "
        "Міська бібліотека зберігає листи, мапи та світлини, які показують, як змінювався краєвид "
        "протягом останніх двох століть. Науковці щомісяця вимірюють якість води, і кількість риби "
        "постійно зростає відтоді, як закрилися фабрики. Її ґрунти родючі, а літо тепле."
    ),
    "ell": (
        "Ο ποταμός πηγάζει από τους λόφους βόρεια της πόλης και ρέει προς τα νότια για περίπου "
        "διακόσια χιλιόμετρα πριν φτάσει στη θάλασσα. Η κοιλάδα του καλλιεργείται από την εποχή "
        "του χαλκού, και στις όχθες του βρέθηκαν τα ερείπια αρκετών αρχαίων οικισμών. Τον δέκατο "
        "ένατο αιώνα ο ποταμός χρησιμοποιούνταν για τη μεταφορά άνθρακα και ξυλείας στο λιμάνι, "
        "και κατασκευάστηκε ένα κανάλι για να αποφεύγονται τα ρηχά ορμητικά νερά κοντά στον παλιό "
        "μύλο. Σήμερα το μονοπάτι κατά μήκος της όχθης είναι αγαπημένη διαδρομή για πεζοπόρους και "
        "ποδηλάτες. Η δημοτική βιβλιοθήκη φυλάσσει επιστολές, χάρτες και φωτογραφίες που δείχνουν "
        "πώς άλλαξε το τοπίο τους τελευταίους δύο αιώνες."
    ),
    "ara": (
        "ينبع النهر من التلال الواقعة شمال المدينة ويجري نحو الجنوب مسافة مئتي كيلومتر تقريبا قبل "
        "أن يصل إلى البحر. وقد زرع الناس واديه منذ العصر البرونزي، وعثر على بقايا عدة قرى قديمة على "
        "ضفافه. وفي القرن التاسع عشر كان النهر يستخدم لنقل الفحم والخشب إلى الميناء، وبنيت قناة "
        "لتجنب المياه الضحلة قرب الطاحونة القديمة. واليوم أصبح الطريق المحاذي للضفة مسارا محبوبا "
        "للمشاة وراكبي الدراجات. وتحفظ مكتبة المدينة رسائل وخرائط وصورا تبين كيف تغير المشهد خلال "
        "القرنين الماضيين. ويقيس العلماء جودة الماء كل شهر، وقد ازداد عدد الأسماك منذ أن أغلقت "
        "المصانع أبوابها."
    ),
    "heb": (
        "הנהר נובע בגבעות שמצפון לעיר וזורם דרומה כמאתיים קילומטרים לפני שהוא מגיע אל הים. העמק "
        "שלו מעובד מאז תקופת הברונזה, ולאורך גדותיו נמצאו שרידים של כמה יישובים קדומים. במאה "
        "התשע עשרה שימש הנהר להובלת פחם ועצים אל הנמל, ולידה של הטחנה הישנה נבנתה תעלה כדי לעקוף "
        "את המפלים הרדודים. כיום השביל לאורך הגדה הוא מסלול אהוב על מטיילים ורוכבי אופניים. "
        "הספרייה העירונית שומרת מכתבים, מפות ותצלומים המראים כיצד השתנה הנוף במאתיים השנים "
        "האחרונות. מדענים מודדים את איכות המים בכל חודש, ומספר הדגים גדל מאז שנסגרו המפעלים."
    ),
    "fas": (
        "این رودخانه از تپه‌های شمال شهر سرچشمه می‌گیرد و پیش از رسیدن به دریا حدود دویست "
        "کیلومتر به سوی جنوب جریان دارد. دره آن از عصر مفرغ زیر کشت بوده است و در کرانه‌هایش "
        "بقایای چند سکونتگاه کهن پیدا شده است. در قرن نوزدهم از رودخانه برای بردن زغال سنگ و "
        "چوب به بندر استفاده می‌شد و در نزدیکی آسیاب قدیمی کانالی ساختند تا از آب‌های کم‌عمق "
        "دوری کنند. امروز راه کنار رودخانه مسیر محبوب پیاده‌روها و دوچرخه‌سواران است. کتابخانه "
        "شهر نامه‌ها، نقشه‌ها و عکس‌هایی را نگه می‌دارد که نشان می‌دهند چشم‌انداز در دو قرن گذشته "
        "چگونه تغییر کرده است."
    ),
    "hin": (
        "नदी शहर के उत्तर की पहाड़ियों से निकलती है और समुद्र तक पहुँचने से पहले लगभग दो सौ "
        "किलोमीटर दक्षिण की ओर बहती है। इसकी घाटी में कांस्य युग से खेती होती आई है, और इसके "
        "किनारों पर कई प्राचीन बस्तियों के अवशेष मिले हैं। उन्नीसवीं सदी में नदी से कोयला और "
        "लकड़ी बंदरगाह तक ले जाई जाती थी, और पुरानी चक्की के पास एक नहर बनाई गई थी। आज "
        "किनारे का रास्ता पैदल चलने वालों और साइकिल चलाने वालों में बहुत लोकप्रिय है। शहर का "
        "पुस्तकालय पत्र, नक्शे और तस्वीरें सँभालकर रखता है, जो दिखाती हैं कि पिछले दो सौ वर्षों "
        "में परिदृश्य कैसे बदला। वैज्ञानिक हर महीने पानी की गुणवत्ता मापते हैं।"
    ),
    "ben": (
        "নদীটি শহরের উত্তরের পাহাড় থেকে উৎপন্ন হয়ে সমুদ্রে পৌঁছানোর আগে প্রায় দুইশো কিলোমিটার "
        "দক্ষিণ দিকে প্রবাহিত হয়। এর উপত্যকায় ব্রোঞ্জ যুগ থেকে চাষাবাদ হয়ে আসছে, এবং এর তীরে "
        "কয়েকটি প্রাচীন বসতির ধ্বংসাবশেষ পাওয়া গেছে। উনিশ শতকে নদীপথে কয়লা ও কাঠ বন্দরে নিয়ে "
        "যাওয়া হতো, এবং পুরোনো কলের কাছে একটি খাল তৈরি করা হয়েছিল। আজ তীরের পথটি পথচারী ও "
        "সাইকেল আরোহীদের কাছে খুব জনপ্রিয়। শহরের গ্রন্থাগারে চিঠি, মানচিত্র ও আলোকচিত্র রাখা আছে, "
        "যা দেখায় গত দুই শতাব্দীতে প্রকৃতি কীভাবে বদলেছে। বিজ্ঞানীরা প্রতি মাসে পানির মান মাপেন।"
    ),
    "chi_sim": (
        "这条河发源于城市北面的丘陵，向南流淌约两百公里后注入大海。河谷自青铜时代起就有人耕种，"
        "沿岸发现了几处早期村落的遗址。十九世纪时，人们利用这条河把煤炭和木材运到港口，"
        "并在旧磨坊附近修建了一条运河，以避开浅滩和急流。如今，河岸边的小路深受徒步者和骑车人的喜爱。"
        "市图书馆保存着许多信件、地图和照片，记录了过去两个世纪里风景的变化。"
        "科学家每个月都会检测水质，自从工厂关闭以来，鱼类的数量一直在稳步增长。"
        "每年春天，学校的学生都会来到河边观察鸟类和植物。"
    ),
    "chi_tra": (
        "這條河發源於城市北面的丘陵，向南流淌約兩百公里後注入大海。河谷自青銅時代起就有人耕種，"
        "沿岸發現了幾處早期村落的遺址。十九世紀時，人們利用這條河把煤炭和木材運到港口，"
        "並在舊磨坊附近修建了一條運河，以避開淺灘和急流。如今，河岸邊的小路深受徒步者和騎車人的喜愛。"
        "市圖書館保存著許多信件、地圖和照片，記錄了過去兩個世紀裡風景的變化。"
        "科學家每個月都會檢測水質，自從工廠關閉以來，魚類的數量一直在穩步增長。"
        "每年春天，學校的學生都會來到河邊觀察鳥類和植物。"
    ),
    "jpn": (
        "この川は町の北にある丘陵から流れ出し、約二百キロメートル南へ流れて海に注ぐ。"
        "流域では青銅器時代から農業が営まれており、岸辺ではいくつかの古い集落の跡が見つかっている。"
        "十九世紀には石炭や木材を港へ運ぶために川が使われ、古い水車小屋の近くには浅瀬を避けるための"
        "運河が造られた。現在、川沿いの道は散歩やサイクリングを楽しむ人々に人気がある。"
        "市立図書館には、この二百年の間に風景がどのように変わったかを示す手紙や地図、写真が保存されている。"
        "研究者は毎月水質を調べており、工場が閉鎖されてから魚の数は着実に増えている。"
    ),
    "kor": (
        "이 강은 도시 북쪽의 언덕에서 시작하여 바다에 이르기 전까지 약 이백 킬로미터를 남쪽으로 "
        "흐른다. 강의 골짜기에서는 청동기 시대부터 농사를 지어 왔으며, 강가에서는 여러 옛 마을의 "
        "흔적이 발견되었다. 십구 세기에는 석탄과 목재를 항구로 나르는 데 강이 이용되었고, 오래된 "
        "물방앗간 근처에는 얕은 여울을 피하기 위한 운하가 만들어졌다. 오늘날 강변의 길은 걷는 "
        "사람과 자전거를 타는 사람들에게 인기가 많다. 시립 도서관에는 지난 이백 년 동안 풍경이 "
        "어떻게 바뀌었는지 보여 주는 편지와 지도, 사진이 보관되어 있다. 과학자들은 매달 물의 "
        "질을 측정한다."
    ),
    "vie": (
        "Con sông bắt nguồn từ những ngọn đồi ở phía bắc thành phố và chảy về phía nam khoảng hai "
        "trăm cây số trước khi đổ ra biển. Thung lũng của nó đã được canh tác từ thời đại đồ đồng, "
        "và dọc hai bờ sông người ta đã tìm thấy dấu tích của nhiều làng cổ. Vào thế kỷ mười chín, "
        "con sông được dùng để chở than và gỗ ra cảng, và một con kênh đã được đào gần chiếc cối "
        "xay cũ để tránh những ghềnh nước nông. Ngày nay, con đường ven sông là lối đi được người "
        "đi bộ và người đi xe đạp rất yêu thích. Thư viện thành phố lưu giữ thư từ, bản đồ và ảnh "
        "chụp cho thấy cảnh quan đã thay đổi như thế nào trong hai thế kỷ qua."
    ),
    "tha": (
        "แม่น้ำสายนี้มีต้นกำเนิดจากเนินเขาทางทิศเหนือของเมือง และไหลลงไปทางใต้ประมาณสองร้อยกิโลเมตร"
        "ก่อนจะออกสู่ทะเล หุบเขาของแม่น้ำมีการเพาะปลูกมาตั้งแต่ยุคสำริด และพบซากหมู่บ้านโบราณหลายแห่ง"
        "ริมฝั่งแม่น้ำ ในศตวรรษที่สิบเก้า ผู้คนใช้แม่น้ำขนถ่านหินและไม้ไปยังท่าเรือ และมีการขุดคลอง"
        "ใกล้โรงโม่เก่าเพื่อหลีกเลี่ยงแก่งน้ำตื้น ปัจจุบันทางเดินริมแม่น้ำเป็นเส้นทางยอดนิยมของนักเดินเท้า"
        "และนักปั่นจักรยาน ห้องสมุดของเมืองเก็บรักษาจดหมาย แผนที่ และภาพถ่าย ซึ่งแสดงให้เห็นว่า"
        "ภูมิทัศน์เปลี่ยนแปลงไปอย่างไรในช่วงสองศตวรรษที่ผ่านมา"
    ),
    "ind": (
        "Sungai ini berhulu di perbukitan sebelah utara kota dan mengalir ke selatan sejauh kira-kira "
        "dua ratus kilometer sebelum mencapai laut. Lembahnya telah digarap sejak Zaman Perunggu, "
        "dan di sepanjang tepiannya ditemukan sisa-sisa beberapa permukiman kuno. Pada abad "
        "kesembilan belas sungai ini digunakan untuk mengangkut batu bara dan kayu ke pelabuhan, "
        "dan sebuah kanal dibangun untuk menghindari jeram dangkal di dekat kincir tua. Saat ini "
        "jalan setapak di tepi sungai menjadi rute favorit bagi pejalan kaki dan pesepeda. "
        "Perpustakaan kota menyimpan surat, peta, dan foto yang menunjukkan bagaimana pemandangan "
        "berubah selama dua abad terakhir. Para ilmuwan mengukur kualitas air setiap bulan."
    ),
}

# The script of each language, as Tesseract's orientation and script detection names it.
SCRIPTS: Final[dict[str, str]] = {
    **dict.fromkeys(
        ("eng", "deu", "fra", "spa", "por", "ita", "nld", "pol", "ces", "swe", "tur", "vie", "ind"), "Latin"
    ),
    "rus": "Cyrillic",
    "ukr": "Cyrillic",
    "ell": "Greek",
    "ara": "Arabic",
    "fas": "Arabic",
    "heb": "Hebrew",
    "hin": "Devanagari",
    "ben": "Bengali",
    "chi_sim": "Han",
    "chi_tra": "Han",
    "jpn": "Japanese",
    "kor": "Hangul",
    "tha": "Thai",
}

# Languages written with spaces between words: scored by words; the others by characters.
SPACED: Final = frozenset(TEXTS) - {"chi_sim", "chi_tra", "jpn", "tha"}

_NOTO = "/usr/share/fonts/truetype/noto/"
_CJK = "/usr/share/fonts/opentype/noto/"
# Two Debian Noto faces per script (a sans and a serif where Noto has both), with the face index
# in a collection (the CJK fonts: 0 Japanese, 1 Korean, 2 Simplified, 3 Traditional Chinese).
_LATIN = ((_NOTO + "NotoSans-Regular.ttf", 0), (_NOTO + "NotoSerif-Regular.ttf", 0))
FONTS: Final[dict[str, tuple[tuple[str, int], ...]]] = {
    **dict.fromkeys(
        ("eng", "deu", "fra", "spa", "por", "ita", "nld", "pol", "ces", "swe", "tur", "vie", "ind"),
        _LATIN,
    ),
    **dict.fromkeys(("rus", "ukr", "ell"), _LATIN),
    "ara": ((_NOTO + "NotoNaskhArabic-Regular.ttf", 0), (_NOTO + "NotoSansArabic-Regular.ttf", 0)),
    "fas": ((_NOTO + "NotoNaskhArabic-Regular.ttf", 0), (_NOTO + "NotoSansArabic-Regular.ttf", 0)),
    "heb": ((_NOTO + "NotoSansHebrew-Regular.ttf", 0), (_NOTO + "NotoSerifHebrew-Regular.ttf", 0)),
    "hin": ((_NOTO + "NotoSansDevanagari-Regular.ttf", 0), (_NOTO + "NotoSerifDevanagari-Regular.ttf", 0)),
    "ben": ((_NOTO + "NotoSansBengali-Regular.ttf", 0), (_NOTO + "NotoSerifBengali-Regular.ttf", 0)),
    "tha": ((_NOTO + "NotoSansThai-Regular.ttf", 0), (_NOTO + "NotoSerifThai-Regular.ttf", 0)),
    "jpn": ((_CJK + "NotoSansCJK-Regular.ttc", 0), (_CJK + "NotoSerifCJK-Regular.ttc", 0)),
    "kor": ((_CJK + "NotoSansCJK-Regular.ttc", 1), (_CJK + "NotoSerifCJK-Regular.ttc", 1)),
    "chi_sim": ((_CJK + "NotoSansCJK-Regular.ttc", 2), (_CJK + "NotoSerifCJK-Regular.ttc", 2)),
    "chi_tra": ((_CJK + "NotoSansCJK-Regular.ttc", 3), (_CJK + "NotoSerifCJK-Regular.ttc", 3)),
}
